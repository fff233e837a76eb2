import { auditEvents } from '@edgemail/schema';

type Row = typeof auditEvents.$inferSelect;

/** An audit event as `GET /api/v1/audit-log` lists it (a project event: `detail` belongs to security events). */
export function presentAuditEvent(r: Row) {
  return {
    id: r.id, category: r.category, type: r.type, project_id: r.projectId, actor_id: r.actorId,
    actor_email: r.actorEmail, client_ip: r.clientIp, method: r.method, path: r.path, status: r.status,
    created_at: r.createdAt.toISOString(),
  };
}
