import { and, eq, sql } from 'drizzle-orm';
import { inboundEmails } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { InboundCursor, InboundStatus } from '../../contracts/inbound-email.js';
import { inboundColumns, presentInboundEmail } from './present.js';

export interface InboundListQuery {
  limit: number;
  status?: InboundStatus;
  /** `received_at` and id of the last row seen: the page starts strictly after it. */
  cursor?: InboundCursor;
}

/**
 * A page of the project's inbound mail, newest first by `(received_at, id)`.
 * The row comparison against the cursor (not `received_at < before`) is what
 * keeps rows sharing one `received_at` from being skipped or repeated across
 * a page boundary; `before` goes to PostgreSQL as text, so microseconds
 * survive. One row beyond the page says whether there is a next one. Both
 * cases (with and without `status`) are one ordered index range scan stopping
 * after `limit + 1` rows (`inbound_emails_project_id[_status]_received_at_id_idx`).
 */
export async function listInboundEmails(db: Db, projectId: string, query: InboundListQuery) {
  const { limit, status, cursor } = query;
  const rows = await db.select(inboundColumns).from(inboundEmails)
    .where(and(
      eq(inboundEmails.projectId, projectId),
      status ? eq(inboundEmails.status, status) : undefined,
      cursor ? sql`(${inboundEmails.receivedAt}, ${inboundEmails.id}) < (${cursor.before}::timestamptz, ${cursor.before_id}::uuid)` : undefined,
    ))
    // NULLS LAST as the indexes are built (drizzle's `.desc()`): with PostgreSQL's default
    // NULLS FIRST the planner cannot read them in order and sorts the whole project instead.
    .orderBy(sql`${inboundEmails.receivedAt} desc nulls last`, sql`${inboundEmails.id} desc nulls last`)
    .limit(limit + 1);
  const page = rows.slice(0, limit).map(presentInboundEmail);
  const last = page.at(-1);
  return { inbound_emails: page, next: rows.length > limit && last ? { before: last.received_at, before_id: last.id } : null };
}
