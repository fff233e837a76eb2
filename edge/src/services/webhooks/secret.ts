// Webhook signing secrets: generated here, sealed (never hashed: the
// dispatcher must read them back to sign), shown once by create and rotate.
import { base64url } from '@edgemail/shared';
import { seal, unseal } from '../../crypto/seal.js';

export const WEBHOOK_SECRET_PREFIX = 'whsec_';
/** The seal context of `webhooks.secret_sealed`: a value sealed for another column does not open as a secret. */
export const WEBHOOK_SECRET_CONTEXT = 'webhooks.secret';

/** A fresh secret with its sealed form; the plaintext goes to the caller once and nowhere else. */
export async function newWebhookSecret(encryptionKey: string): Promise<{ secret: string; sealed: string }> {
  const secret = WEBHOOK_SECRET_PREFIX + base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { secret, sealed: await seal(secret, encryptionKey, WEBHOOK_SECRET_CONTEXT) };
}

/** The plaintext of `webhooks.secret_sealed`; throws SealError when it cannot be opened. */
export const openWebhookSecret = (sealed: string, encryptionKey: string) => unseal(sealed, encryptionKey, WEBHOOK_SECRET_CONTEXT);
