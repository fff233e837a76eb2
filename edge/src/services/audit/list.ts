import { and, desc, eq } from 'drizzle-orm';
import { auditEvents } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

/** A project's activity, newest first. */
export async function listProjectAuditEvents(db: Db, projectId: string, limit: number, offset: number) {
  const rows = await db.select().from(auditEvents)
    .where(and(eq(auditEvents.projectId, projectId), eq(auditEvents.category, 'project')))
    .orderBy(desc(auditEvents.createdAt), desc(auditEvents.id))
    .limit(limit)
    .offset(offset);
  return rows.map((r) => ({
    id: r.id, category: r.category, type: r.type, project_id: r.projectId, actor_id: r.actorId,
    actor_email: r.actorEmail, client_ip: r.clientIp, method: r.method, path: r.path, status: r.status,
    created_at: r.createdAt.toISOString(),
  }));
}
