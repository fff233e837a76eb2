// SMTP passwords are sealed, not hashed: the probe and the relay nodes'
// delivery need them back. The context binds a sealed value to this column.
import { seal, unseal } from '../../crypto/seal.js';

/** The seal context of `smtp_servers.password_sealed`. */
export const SMTP_PASSWORD_CONTEXT = 'smtp_servers.password';

export const sealSmtpPassword = (password: string, encryptionKey: string) => seal(password, encryptionKey, SMTP_PASSWORD_CONTEXT);

/** The plaintext of `smtp_servers.password_sealed`; throws SealError when it cannot be opened. */
export const openSmtpPassword = (sealed: string, encryptionKey: string) => unseal(sealed, encryptionKey, SMTP_PASSWORD_CONTEXT);
