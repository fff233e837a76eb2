import { and, eq } from 'drizzle-orm';
import { apiKeys } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';

export async function deleteApiKey(db: Db, projectId: string, id: string): Promise<void> {
  const deleted = await db.delete(apiKeys)
    .where(and(eq(apiKeys.projectId, projectId), eq(apiKeys.id, id)))
    .returning({ id: apiKeys.id });
  if (!deleted.length) throw notFound('API key not found');
}
