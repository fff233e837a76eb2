import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import { emailAttempts, emails, outboundMessages } from '@edgemail/schema';
import { emailAttemptColumns, emailDetailColumns, presentEmailDetail, type EmailAttemptRow } from '../emails/present.js';
import { cursorText, newestFirst, olderThan, PAGE_ROWS, withinBodyBudget, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/**
 * One line per recipient, as `GET /api/v1/emails/{id}` returns it: the log
 * record, the message's content and every delivery attempt (sandbox captures
 * included, marked `sandbox`). A page is chosen first by keys and body sizes
 * (off `emails_project_id_created_at_idx`), then read whole with its attempts
 * in one more round trip.
 */
export const emailSource = exportSource<Cursor>({
  type: 'email',
  async read({ db, projectId }, cursor) {
    const keys = await db.select({
      id: emails.id, cursorAt: cursorText(emails.createdAt),
      bytes: sql<number>`coalesce(octet_length(${outboundMessages.text}), 0) + coalesce(octet_length(${outboundMessages.html}), 0)`.mapWith(Number),
    }).from(emails)
      .innerJoin(outboundMessages, eq(outboundMessages.id, emails.messageId))
      .where(and(eq(emails.projectId, projectId), olderThan(cursor, emails.createdAt, emails.id)))
      .orderBy(...newestFirst(emails.createdAt, emails.id, 'desc'))
      .limit(PAGE_ROWS);
    const { kept, more } = withinBodyBudget(keys);
    if (!kept.length) return { records: [], next: null };
    const ids = kept.map((k) => k.id);

    const [rows, attempts] = await db.batch([
      db.select(emailDetailColumns).from(emails)
        .innerJoin(outboundMessages, eq(outboundMessages.id, emails.messageId))
        .where(and(eq(emails.projectId, projectId), inArray(emails.id, ids)))
        .orderBy(...newestFirst(emails.createdAt, emails.id, 'desc')),
      db.select(emailAttemptColumns).from(emailAttempts)
        .innerJoin(emails, eq(emails.id, emailAttempts.emailId))
        .where(and(eq(emails.projectId, projectId), inArray(emailAttempts.emailId, ids)))
        .orderBy(asc(emailAttempts.emailId), asc(emailAttempts.attempt)),
    ]);
    const byEmail = new Map<string, EmailAttemptRow[]>();
    for (const a of attempts) {
      const list = byEmail.get(a.emailId);
      if (list) list.push(a);
      else byEmail.set(a.emailId, [a]);
    }
    const last = kept.at(-1)!;
    return {
      records: rows.map((row) => presentEmailDetail(row, byEmail.get(row.id) ?? [])),
      next: more ? { at: last.cursorAt, id: last.id } : null,
    };
  },
});
