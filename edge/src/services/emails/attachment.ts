import { and, eq } from 'drizzle-orm';
import { emails, outboundMessages, type OutboundAttachment } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { emailNotFound } from './get.js';

/**
 * Attachment `index` (zero-based, in the send's order) of the message an
 * email row belongs to, with its metadata; 404 past the list or when the
 * bytes are not in R2.
 */
export async function openOutboundAttachment(db: Db, store: R2Bucket, projectId: string, id: string, index: number): Promise<{ meta: OutboundAttachment; object: R2ObjectBody }> {
  const [row] = await db.select({ attachments: outboundMessages.attachments }).from(emails)
    .innerJoin(outboundMessages, eq(outboundMessages.id, emails.messageId))
    .where(and(eq(emails.projectId, projectId), eq(emails.id, id)));
  if (!row) throw emailNotFound();
  const meta = Number.isSafeInteger(index) ? row.attachments[index] : undefined;
  if (!meta) throw notFound(`attachment ${index} not found (the message has ${row.attachments.length})`);
  const object = await store.get(meta.r2_key);
  if (!object) throw notFound(`attachment ${index} not stored`);
  return { meta, object };
}
