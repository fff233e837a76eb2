import { and, eq } from 'drizzle-orm';
import { inboundEmails, type InboundAttachment } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { attachmentKey } from './storage-keys.js';
import { inboundNotFound } from './get.js';

/**
 * Attachment `index` (zero-based, in the record's `attachments` order) with
 * its metadata; 404 when the index is past the list or the bytes are not in R2.
 */
export async function openAttachment(db: Db, store: R2Bucket, projectId: string, id: string, index: number): Promise<{ meta: InboundAttachment; object: R2ObjectBody }> {
  const [row] = await db.select({ spoolId: inboundEmails.spoolId, attachments: inboundEmails.attachments }).from(inboundEmails)
    .where(and(eq(inboundEmails.projectId, projectId), eq(inboundEmails.id, id)));
  if (!row) throw inboundNotFound();
  const meta = Number.isSafeInteger(index) ? row.attachments[index] : undefined;
  if (!meta) throw notFound(`attachment ${index} not found (the message has ${row.attachments.length})`);
  const object = await store.get(attachmentKey(projectId, row.spoolId, index));
  if (!object) throw notFound(`attachment ${index} not stored`);
  return { meta, object };
}
