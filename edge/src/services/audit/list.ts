import { and, desc, eq } from 'drizzle-orm';
import { auditEvents } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { presentAuditEvent } from './present.js';

/** A project's activity, newest first. */
export async function listProjectAuditEvents(db: Db, projectId: string, limit: number, offset: number) {
  const rows = await db.select().from(auditEvents)
    .where(and(eq(auditEvents.projectId, projectId), eq(auditEvents.category, 'project')))
    .orderBy(desc(auditEvents.createdAt), desc(auditEvents.id))
    .limit(limit)
    .offset(offset);
  return rows.map(presentAuditEvent);
}
