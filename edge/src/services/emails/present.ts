import { sql } from 'drizzle-orm';
import { emailAttempts, emails, outboundMessages } from '@edgemail/schema';
import type { EmailDetail, EmailRecord, EmailStatus, RecipientKind } from '../../contracts/email.js';
import { iso } from '../../contracts/common.js';
import { cursorTimestamp } from '../inbound-emails/present.js';

/**
 * What a log record is made from: the recipient's row joined with its
 * message. `createdMicros` is the part of `created_at` below the
 * millisecond, so that `created_at` sent back as `before` is exact.
 */
export const emailColumns = {
  id: emails.id, messageId: emails.messageId, projectId: emails.projectId, recipient: emails.recipient,
  kind: emails.kind, status: emails.status, attempts: emails.attempts, errorMessage: emails.errorMessage,
  smtpReply: emails.smtpReply, nodeId: emails.nodeId, sentAt: emails.sentAt, createdAt: emails.createdAt,
  from: outboundMessages.from, to: outboundMessages.to, cc: outboundMessages.cc, subject: outboundMessages.subject,
  tags: outboundMessages.tags, headers: outboundMessages.headers, sandbox: outboundMessages.sandbox, origin: outboundMessages.origin, sendAt: outboundMessages.sendAt,
  stream: outboundMessages.stream,
  createdMicros: sql<number>`(extract(microseconds from ${emails.createdAt})::int % 1000)`.mapWith(Number),
};

export interface EmailRow {
  id: string; messageId: string; projectId: string; recipient: string; kind: string; status: EmailStatus;
  attempts: number; errorMessage: string | null; smtpReply: string | null; nodeId: string | null;
  sentAt: Date | null; createdAt: Date; from: string; to: string[]; cc: string[]; subject: string;
  tags: string[]; headers: Record<string, string>; sandbox: boolean; origin: string; sendAt: Date | null; stream: string; createdMicros: number;
}

export function presentEmail(row: EmailRow): EmailRecord {
  return {
    id: row.id, message_id: row.messageId, project_id: row.projectId, from: row.from, recipient: row.recipient,
    kind: row.kind as RecipientKind, to: row.to, cc: row.cc, subject: row.subject, status: row.status,
    attempts: row.attempts, error_message: row.errorMessage, smtp_reply: row.smtpReply, node_id: row.nodeId,
    tags: row.tags, headers: row.headers, sandbox: row.sandbox, origin: row.origin === 'smtp' || row.origin === 'test' || row.origin === 'system' || row.origin === 'forward' ? row.origin : 'api', send_at: iso(row.sendAt),
    stream: row.stream,
    created_at: cursorTimestamp(row.createdAt, row.createdMicros), sent_at: iso(row.sentAt),
  };
}

/** A detail record adds the message's content to the log record (`GET /api/v1/emails/{id}`, the data export). */
export const emailDetailColumns = {
  ...emailColumns, messageIdHeader: outboundMessages.messageId, replyTo: outboundMessages.replyTo,
  text: outboundMessages.text, html: outboundMessages.html, attachments: outboundMessages.attachments,
  templateId: outboundMessages.templateId, templateVersionId: outboundMessages.templateVersionId,
};
export type EmailDetailRow = EmailRow & Pick<typeof outboundMessages.$inferSelect, 'replyTo' | 'text' | 'html' | 'attachments' | 'templateId' | 'templateVersionId'> & { messageIdHeader: string };

export const emailAttemptColumns = {
  emailId: emailAttempts.emailId, attempt: emailAttempts.attempt, outcome: emailAttempts.outcome, smtpCode: emailAttempts.smtpCode,
  reply: emailAttempts.reply, server: emailAttempts.server, nodeId: emailAttempts.nodeId, startedAt: emailAttempts.startedAt,
  durationMs: emailAttempts.durationMs,
};
export type EmailAttemptRow = Pick<typeof emailAttempts.$inferSelect, keyof typeof emailAttemptColumns>;

/** @param attempts the email's attempt rows, in attempt order */
export function presentEmailDetail(row: EmailDetailRow, attempts: EmailAttemptRow[]): EmailDetail {
  return {
    ...presentEmail(row),
    message_id_header: row.messageIdHeader,
    reply_to: row.replyTo,
    text: row.text,
    html: row.html,
    attachments: row.attachments.map(({ filename, content_type, size }) => ({ filename, content_type, size })),
    template_id: row.templateId,
    template_version_id: row.templateVersionId,
    delivery_attempts: attempts.map((a) => ({
      attempt: a.attempt, outcome: a.outcome as 'sent' | 'deferred' | 'failed', smtp_code: a.smtpCode, reply: a.reply,
      server: a.server, node_id: a.nodeId, started_at: a.startedAt.toISOString(), duration_ms: a.durationMs,
    })),
  };
}
