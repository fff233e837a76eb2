import { eq, sql } from 'drizzle-orm';
import { platformCredentials } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { credentialColumns, presentCredential } from './present.js';

export async function revokePlatformCredential(db: Db, id: string) {
  const [row] = await db.update(platformCredentials)
    .set({ revoked: true, revokedAt: sql`coalesce(${platformCredentials.revokedAt}, now())` })
    .where(eq(platformCredentials.id, id))
    .returning(credentialColumns);
  if (!row) throw notFound('platform credential not found');
  return presentCredential(row);
}
