import { and, asc, eq } from 'drizzle-orm';
import { emailAttempts, emails, outboundMessages } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import type { EmailDetail } from '../../contracts/email.js';
import { iso } from '../../contracts/common.js';
import { emailColumns, presentEmail } from './present.js';

export const emailNotFound = () => notFound('email not found');

/**
 * One recipient's record with its message's content and every delivery
 * attempt, in one round trip; another project's id is not found.
 * @param sandboxOnly only a sandbox key's send is found (the sandbox routes)
 */
export async function getEmail(db: Db, projectId: string, id: string, opts: { sandboxOnly?: boolean } = {}): Promise<EmailDetail> {
  const [[row], attempts] = await db.batch([
    db.select({
      ...emailColumns, messageIdHeader: outboundMessages.messageId, replyTo: outboundMessages.replyTo,
      text: outboundMessages.text, html: outboundMessages.html, attachments: outboundMessages.attachments,
    }).from(emails)
      .innerJoin(outboundMessages, eq(outboundMessages.id, emails.messageId))
      .where(and(eq(emails.projectId, projectId), eq(emails.id, id), opts.sandboxOnly ? eq(outboundMessages.sandbox, true) : undefined)),
    db.select({
      attempt: emailAttempts.attempt, outcome: emailAttempts.outcome, smtpCode: emailAttempts.smtpCode, reply: emailAttempts.reply,
      server: emailAttempts.server, nodeId: emailAttempts.nodeId, startedAt: emailAttempts.startedAt, durationMs: emailAttempts.durationMs,
    }).from(emailAttempts)
      .innerJoin(emails, eq(emails.id, emailAttempts.emailId))
      .where(and(eq(emails.projectId, projectId), eq(emailAttempts.emailId, id)))
      .orderBy(asc(emailAttempts.attempt)),
  ]);
  if (!row) throw emailNotFound();
  return {
    ...presentEmail(row),
    message_id_header: row.messageIdHeader,
    reply_to: row.replyTo,
    text: row.text,
    html: row.html,
    attachments: row.attachments.map(({ filename, content_type, size }) => ({ filename, content_type, size })),
    delivery_attempts: attempts.map((a) => ({
      attempt: a.attempt, outcome: a.outcome as 'sent' | 'deferred' | 'failed', smtp_code: a.smtpCode, reply: a.reply,
      server: a.server, node_id: a.nodeId, started_at: iso(a.startedAt)!, duration_ms: a.durationMs,
    })),
  };
}
