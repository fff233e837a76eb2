// An identity provider's client secret: write-only through the API, stored
// sealed (AES-GCM under `database.crypto.encryption_key`, bound to this
// column by its context), opened only by the sign-in flow at the token request.
import type { Config } from '@edgemail/shared';
import { seal, unseal } from '../../crypto/seal.js';

export const CLIENT_SECRET_CONTEXT = 'identity_providers.client_secret';

export const sealClientSecret = (config: Config, secret: string): Promise<string> =>
  seal(secret, config['database.crypto.encryption_key'], CLIENT_SECRET_CONTEXT);

/** Throws SealError when the value was sealed under another key or context. */
export const openClientSecret = (config: Config, sealed: string): Promise<string> =>
  unseal(sealed, config['database.crypto.encryption_key'], CLIENT_SECRET_CONTEXT);
