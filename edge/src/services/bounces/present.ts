import { sql } from 'drizzle-orm';
import { bounces } from '@edgemail/schema';
import type { BounceRecord } from '../../contracts/bounce.js';
import { cursorTimestamp } from '../inbound-emails/present.js';

/**
 * The columns a record is built from; `createdMicros` is the part of
 * `created_at` below the millisecond, so that `created_at` sent back as
 * `before` is exact (rows recorded by one statement share it).
 */
export const bounceColumns = {
  id: bounces.id, projectId: bounces.projectId, emailId: bounces.emailId, recipient: bounces.recipient,
  type: bounces.type, source: bounces.source, smtpCode: bounces.smtpCode, status: bounces.status,
  diagnostic: bounces.diagnostic, remoteMta: bounces.remoteMta, feedbackType: bounces.feedbackType,
  originalMessageId: bounces.originalMessageId, createdAt: bounces.createdAt,
  createdMicros: sql<number>`(extract(microseconds from ${bounces.createdAt})::int % 1000)`.mapWith(Number),
};
export type BounceRow = Pick<typeof bounces.$inferSelect, Exclude<keyof typeof bounceColumns, 'createdMicros'>> & { createdMicros: number };

export function presentBounce(row: BounceRow): BounceRecord {
  return {
    id: row.id, project_id: row.projectId, email_id: row.emailId, recipient: row.recipient, type: row.type,
    source: row.source, smtp_code: row.smtpCode, status: row.status, diagnostic: row.diagnostic,
    remote_mta: row.remoteMta, feedback_type: row.feedbackType, original_message_id: row.originalMessageId,
    created_at: cursorTimestamp(row.createdAt, row.createdMicros),
  };
}
