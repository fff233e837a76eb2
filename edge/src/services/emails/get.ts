import { and, asc, eq } from 'drizzle-orm';
import { emailAttempts, emails, outboundMessages } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import type { EmailDetail } from '../../contracts/email.js';
import { emailAttemptColumns, emailDetailColumns, presentEmailDetail } from './present.js';

export const emailNotFound = () => notFound('email not found');

/**
 * One recipient's record with its message's content and every delivery
 * attempt, in one round trip; another project's id is not found.
 * @param sandboxOnly only a sandbox key's send is found (the sandbox routes)
 */
export async function getEmail(db: Db, projectId: string, id: string, opts: { sandboxOnly?: boolean } = {}): Promise<EmailDetail> {
  const [[row], attempts] = await db.batch([
    db.select(emailDetailColumns).from(emails)
      .innerJoin(outboundMessages, eq(outboundMessages.id, emails.messageId))
      .where(and(eq(emails.projectId, projectId), eq(emails.id, id), opts.sandboxOnly ? eq(outboundMessages.sandbox, true) : undefined)),
    db.select(emailAttemptColumns).from(emailAttempts)
      .innerJoin(emails, eq(emails.id, emailAttempts.emailId))
      .where(and(eq(emails.projectId, projectId), eq(emailAttempts.emailId, id)))
      .orderBy(asc(emailAttempts.attempt)),
  ]);
  if (!row) throw emailNotFound();
  return presentEmailDetail(row, attempts);
}
