import { and, eq, sql } from 'drizzle-orm';
import { apiKeys } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { apiKeyColumns, presentApiKey } from './present.js';

/** Revokes a key; revoking a revoked key keeps its first revocation time. */
export async function revokeApiKey(db: Db, projectId: string, id: string) {
  const [row] = await db.update(apiKeys)
    .set({ revoked: true, revokedAt: sql`coalesce(${apiKeys.revokedAt}, now())` })
    .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, id)))
    .returning(apiKeyColumns);
  if (!row) throw notFound('API key not found');
  return presentApiKey(row);
}
