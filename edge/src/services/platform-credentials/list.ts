import { desc } from 'drizzle-orm';
import { platformCredentials } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { credentialColumns, presentCredential } from './present.js';

export async function listPlatformCredentials(db: Db) {
  const rows = await db.select(credentialColumns).from(platformCredentials)
    .orderBy(desc(platformCredentials.createdAt), desc(platformCredentials.id));
  return rows.map(presentCredential);
}
