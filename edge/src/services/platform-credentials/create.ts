// Minting a platform credential; also used by `edgemail admin create-credential`.
import { platformCredentials } from '@edgemail/schema';
import { generateToken, sha256Hex } from '@edgemail/shared';
import type { AnyDb } from '../../db/any-db.js';
import { credentialColumns, presentCredential } from './present.js';

export async function createPlatformCredential(db: AnyDb, input: { name: string; allowed_ips?: string[]; expires_at?: string }) {
  const { token, keyPrefix } = generateToken('platform');
  const [row] = await db.insert(platformCredentials)
    .values({
      name: input.name, keyPrefix, keyHash: await sha256Hex(token), allowedIps: input.allowed_ips ?? [],
      expiresAt: input.expires_at ? new Date(input.expires_at) : null,
    })
    .returning(credentialColumns);
  return { credential: presentCredential(row!), token };
}
