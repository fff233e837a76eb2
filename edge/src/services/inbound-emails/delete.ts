import { and, eq } from 'drizzle-orm';
import { inboundEmails } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { objectPrefix } from './storage-keys.js';
import { inboundNotFound } from './get.js';
import { removeStoredObjects } from './remove-objects.js';

/**
 * Removes a record, then its stored objects. The row goes first: once it is
 * gone nothing can reach the objects, so a failure in R2 leaves only
 * unreachable bytes behind (logged), never a record whose raw download fails.
 */
export async function deleteInboundEmail(db: Db, store: R2Bucket, projectId: string, id: string): Promise<void> {
  const [row] = await db.delete(inboundEmails)
    .where(and(eq(inboundEmails.projectId, projectId), eq(inboundEmails.id, id)))
    .returning({ spoolId: inboundEmails.spoolId, rawKey: inboundEmails.rawKey });
  if (!row) throw inboundNotFound();
  await removeStoredObjects(store, objectPrefix(projectId, row.spoolId), row.rawKey, `inbound email ${id}`);
}
