import { and, eq, sql } from 'drizzle-orm';
import { emails, outboundMessages } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { EmailCursor, EmailStatus } from '../../contracts/email.js';
import { emailColumns, presentEmail } from './present.js';

export interface EmailListQuery {
  limit: number;
  status?: EmailStatus;
  /** A bare address, compared case-insensitively. */
  recipient?: string;
  tag?: string;
  /** RFC 3339: `created_at` at or after. */
  since?: string;
  /** RFC 3339: `created_at` before. */
  until?: string;
  /** `created_at` and id of the last row seen: the page starts strictly after it. */
  cursor?: EmailCursor;
  /** Only sends of sandbox keys (the sandbox list). */
  sandboxOnly?: boolean;
}

/**
 * A page of the project's email log, newest first by `(created_at, id)`,
 * paged as the inbound list is (see services/inbound-emails/list.ts): a row
 * comparison against the cursor, timestamps sent to PostgreSQL as text so
 * microseconds survive, one row beyond the page to tell whether there is a
 * next. The project's rows are read in order off
 * `emails_project_id[_status]_created_at_idx`; each joins its message by key.
 */
export async function listEmails(db: Db, projectId: string, query: EmailListQuery) {
  const { limit, status, recipient, tag, since, until, cursor, sandboxOnly } = query;
  const rows = await db.select(emailColumns).from(emails)
    .innerJoin(outboundMessages, eq(outboundMessages.id, emails.messageId))
    .where(and(
      eq(emails.projectId, projectId),
      status ? eq(emails.status, status) : undefined,
      recipient !== undefined ? sql`lower(${emails.recipient}) = ${recipient.trim().toLowerCase()}` : undefined,
      tag !== undefined ? sql`${tag} = any(${outboundMessages.tags})` : undefined,
      since !== undefined ? sql`${emails.createdAt} >= ${since}::timestamptz` : undefined,
      until !== undefined ? sql`${emails.createdAt} < ${until}::timestamptz` : undefined,
      sandboxOnly ? eq(outboundMessages.sandbox, true) : undefined,
      cursor ? sql`(${emails.createdAt}, ${emails.id}) < (${cursor.before}::timestamptz, ${cursor.before_id}::uuid)` : undefined,
    ))
    // NULLS LAST as the indexes are built (drizzle's `.desc()`), so the planner reads them in order.
    .orderBy(sql`${emails.createdAt} desc nulls last`, sql`${emails.id} desc nulls last`)
    .limit(limit + 1);
  const page = rows.slice(0, limit).map(presentEmail);
  const last = page.at(-1);
  return { emails: page, next: rows.length > limit && last ? { before: last.created_at, before_id: last.id } : null };
}
