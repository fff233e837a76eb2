import { desc, eq } from 'drizzle-orm';
import { apiKeys } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { apiKeyColumns, presentApiKey } from './present.js';

export async function listApiKeys(db: Db, projectId: string) {
  const rows = await db.select(apiKeyColumns).from(apiKeys)
    .where(eq(apiKeys.projectId, projectId))
    .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id));
  return rows.map(presentApiKey);
}
