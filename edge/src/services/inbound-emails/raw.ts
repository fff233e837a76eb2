import { and, eq } from 'drizzle-orm';
import { inboundEmails } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { inboundNotFound } from './get.js';

/** The stored raw message of a record; 404 when the record has none or R2 lost it. */
export async function openRawMessage(db: Db, store: R2Bucket, projectId: string, id: string): Promise<R2ObjectBody> {
  const [row] = await db.select({ rawKey: inboundEmails.rawKey }).from(inboundEmails)
    .where(and(eq(inboundEmails.projectId, projectId), eq(inboundEmails.id, id)));
  if (!row) throw inboundNotFound();
  const object = row.rawKey ? await store.get(row.rawKey) : null;
  if (!object) throw notFound('raw message not stored');
  return object;
}
