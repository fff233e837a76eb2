import { sql } from 'drizzle-orm';
import { inboundEmails } from '@edgemail/schema';
import type { InboundEmailRecord } from '../../contracts/inbound-email.js';

/**
 * The columns a record is built from. `receivedMicros` is the part of
 * `received_at` below the millisecond, which a JavaScript Date drops: the
 * record carries it so that `received_at` sent back as `before` is exact.
 */
export const inboundColumns = {
  id: inboundEmails.id, projectId: inboundEmails.projectId, domainId: inboundEmails.domainId,
  messageId: inboundEmails.messageId, sender: inboundEmails.sender, recipients: inboundEmails.recipients,
  subject: inboundEmails.subject, textBody: inboundEmails.textBody, htmlBody: inboundEmails.htmlBody,
  strippedText: inboundEmails.strippedText, strippedSignature: inboundEmails.strippedSignature,
  headers: inboundEmails.headers, attachments: inboundEmails.attachments, auth: inboundEmails.auth, spam: inboundEmails.spam,
  rawKey: inboundEmails.rawKey, size: inboundEmails.size, status: inboundEmails.status,
  statusReason: inboundEmails.statusReason, receivedAt: inboundEmails.receivedAt, createdAt: inboundEmails.createdAt,
  receivedMicros: sql<number>`(extract(microseconds from ${inboundEmails.receivedAt})::int % 1000)`.mapWith(Number),
};
export type InboundRow = Pick<typeof inboundEmails.$inferSelect, Exclude<keyof typeof inboundColumns, 'receivedMicros'>> & { receivedMicros: number };

/** RFC 3339 with milliseconds, or microseconds when the stored value has them. */
export function cursorTimestamp(at: Date, micros: number): string {
  const iso = at.toISOString();
  return micros ? `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}Z` : iso;
}

export function presentInboundEmail(row: InboundRow): InboundEmailRecord {
  return {
    id: row.id, project_id: row.projectId, domain_id: row.domainId,
    // Stored "" when the message had none (the column is NOT NULL); an absent identifier reads as null.
    message_id: row.messageId === '' ? null : row.messageId,
    sender: row.sender, recipients: row.recipients, subject: row.subject, text_body: row.textBody,
    html_body: row.htmlBody, stripped_text: row.strippedText, stripped_signature: row.strippedSignature, headers: row.headers, attachments: row.attachments, auth: row.auth, spam: row.spam,
    has_raw: row.rawKey !== null, size: row.size, status: row.status, status_reason: row.statusReason,
    received_at: cursorTimestamp(row.receivedAt, row.receivedMicros), created_at: row.createdAt.toISOString(),
  };
}
