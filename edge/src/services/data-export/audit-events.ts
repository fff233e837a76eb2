import { and, eq, getTableColumns } from 'drizzle-orm';
import { auditEvents } from '@edgemail/schema';
import { presentAuditEvent } from '../audit/present.js';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** The project's audit trail as `GET /api/v1/audit-log` lists it (members' security events belong to their accounts, not here). */
export const auditEventSource = exportSource<Cursor>({
  type: 'audit_event',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({ ...getTableColumns(auditEvents), cursorAt: cursorText(auditEvents.createdAt) }).from(auditEvents)
      .where(and(eq(auditEvents.projectId, projectId), eq(auditEvents.category, 'project'), olderThan(cursor, auditEvents.createdAt, auditEvents.id)))
      .orderBy(...newestFirst(auditEvents.createdAt, auditEvents.id, 'asc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, presentAuditEvent);
  },
});
