import { and, eq } from 'drizzle-orm';
import { inboundEmails } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { inboundColumns, presentInboundEmail } from './present.js';

export const inboundNotFound = () => notFound('inbound email not found');

export async function getInboundEmail(db: Db, projectId: string, id: string) {
  const [row] = await db.select(inboundColumns).from(inboundEmails)
    .where(and(eq(inboundEmails.projectId, projectId), eq(inboundEmails.id, id)));
  if (!row) throw inboundNotFound();
  return presentInboundEmail(row);
}
