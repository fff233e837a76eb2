import { desc, eq, sql } from 'drizzle-orm';
import { apiKeys } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { prepared } from '../../db/prepared.js';
import { apiKeyColumns, presentApiKey } from './present.js';

const keysOfProject = prepared((db) => db.select(apiKeyColumns).from(apiKeys)
  .where(eq(apiKeys.projectId, sql.placeholder('projectId')))
  .orderBy(desc(apiKeys.createdAt), desc(apiKeys.id))
  .prepare('api_keys_of_project'));

export async function listApiKeys(db: Db, projectId: string) {
  const rows = await keysOfProject(db).execute({ projectId });
  return rows.map(presentApiKey);
}
