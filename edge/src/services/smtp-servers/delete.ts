import { and, eq } from 'drizzle-orm';
import { smtpServers } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { inScope, SMTP_SERVER_NOT_FOUND, type SmtpServerScope } from './scope.js';

/** Removes a server of the scope; another scope's id is 404 as an unknown one is. */
export async function deleteSmtpServer(db: Db, scope: SmtpServerScope, id: string): Promise<void> {
  const deleted = await db.delete(smtpServers)
    .where(and(inScope(scope), eq(smtpServers.id, id)))
    .returning({ id: smtpServers.id });
  if (!deleted.length) throw notFound(SMTP_SERVER_NOT_FOUND);
}
