import { and, eq, getTableColumns } from 'drizzle-orm';
import { bounces } from '@edgemail/schema';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

type BounceRow = typeof bounces.$inferSelect;

/**
 * A bounce or complaint record: the row's fields but `source_ref` (the
 * report's identity at its source, kept to record it once), which no reader
 * needs. Until the bounces routes arrive with their own record, this is it.
 */
function presentBounce(r: BounceRow) {
  return {
    id: r.id, project_id: r.projectId, email_id: r.emailId, recipient: r.recipient, type: r.type, source: r.source,
    smtp_code: r.smtpCode, status: r.status, diagnostic: r.diagnostic, remote_mta: r.remoteMta,
    feedback_type: r.feedbackType, original_message_id: r.originalMessageId, created_at: r.createdAt.toISOString(),
  };
}

/** Bounces and complaints recorded against the project's emails. */
export const bounceSource = exportSource<Cursor>({
  type: 'bounce',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({ ...getTableColumns(bounces), cursorAt: cursorText(bounces.createdAt) }).from(bounces)
      .where(and(eq(bounces.projectId, projectId), olderThan(cursor, bounces.createdAt, bounces.id)))
      .orderBy(...newestFirst(bounces.createdAt, bounces.id, 'desc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, presentBounce);
  },
});
