import { sql } from 'drizzle-orm';
import { emails, outboundMessages } from '@edgemail/schema';
import type { EmailRecord, EmailStatus, RecipientKind } from '../../contracts/email.js';
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
  tags: outboundMessages.tags, headers: outboundMessages.headers, sandbox: outboundMessages.sandbox,
  createdMicros: sql<number>`(extract(microseconds from ${emails.createdAt})::int % 1000)`.mapWith(Number),
};

export interface EmailRow {
  id: string; messageId: string; projectId: string; recipient: string; kind: string; status: EmailStatus;
  attempts: number; errorMessage: string | null; smtpReply: string | null; nodeId: string | null;
  sentAt: Date | null; createdAt: Date; from: string; to: string[]; cc: string[]; subject: string;
  tags: string[]; headers: Record<string, string>; sandbox: boolean; createdMicros: number;
}

export function presentEmail(row: EmailRow): EmailRecord {
  return {
    id: row.id, message_id: row.messageId, project_id: row.projectId, from: row.from, recipient: row.recipient,
    kind: row.kind as RecipientKind, to: row.to, cc: row.cc, subject: row.subject, status: row.status,
    attempts: row.attempts, error_message: row.errorMessage, smtp_reply: row.smtpReply, node_id: row.nodeId,
    tags: row.tags, headers: row.headers, sandbox: row.sandbox,
    created_at: cursorTimestamp(row.createdAt, row.createdMicros), sent_at: iso(row.sentAt),
  };
}
