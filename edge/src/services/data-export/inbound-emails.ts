import { and, eq, inArray, sql } from 'drizzle-orm';
import { inboundEmails } from '@edgemail/schema';
import { inboundColumns, presentInboundEmail } from '../inbound-emails/present.js';
import { cursorText, newestFirst, olderThan, PAGE_ROWS, withinBodyBudget, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/**
 * Received mail as `GET /api/v1/inbound-emails/{id}` returns it, newest first
 * by `received_at` (off `inbound_emails_project_id_received_at_id_idx`). The
 * raw message and attachment bytes stay in object storage: `has_raw` and
 * `attachments` say what the download routes serve. A page is chosen by keys
 * and body sizes first, then read whole.
 */
export const inboundEmailSource = exportSource<Cursor>({
  type: 'inbound_email',
  async read({ db, projectId }, cursor) {
    const keys = await db.select({
      id: inboundEmails.id, cursorAt: cursorText(inboundEmails.receivedAt),
      bytes: sql<number>`octet_length(${inboundEmails.textBody}) + octet_length(${inboundEmails.htmlBody})`.mapWith(Number),
    }).from(inboundEmails)
      .where(and(eq(inboundEmails.projectId, projectId), olderThan(cursor, inboundEmails.receivedAt, inboundEmails.id)))
      .orderBy(...newestFirst(inboundEmails.receivedAt, inboundEmails.id, 'desc'))
      .limit(PAGE_ROWS);
    const { kept, more } = withinBodyBudget(keys);
    if (!kept.length) return { records: [], next: null };

    const rows = await db.select(inboundColumns).from(inboundEmails)
      .where(and(eq(inboundEmails.projectId, projectId), inArray(inboundEmails.id, kept.map((k) => k.id))))
      .orderBy(...newestFirst(inboundEmails.receivedAt, inboundEmails.id, 'desc'));
    const last = kept.at(-1)!;
    return { records: rows.map(presentInboundEmail), next: more ? { at: last.cursorAt, id: last.id } : null };
  },
});
