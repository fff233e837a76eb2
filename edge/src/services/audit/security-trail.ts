// Reading the account security trail (category `security`): a person's own
// events, and every account's for a platform admin. Newest first, paged as
// the project audit log is.
import { and, desc, eq, type SQL } from 'drizzle-orm';
import { auditEvents } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { AuditPage } from '../../contracts/audit-page.js';

type Row = typeof auditEvents.$inferSelect;

const presentOwn = (r: Row) => ({
  id: r.id, type: r.type, detail: r.detail, client_ip: r.clientIp, user_agent: r.userAgent, created_at: r.createdAt.toISOString(),
});

const presentAdmin = (r: Row) => ({
  ...presentOwn(r), user_id: r.actorId, actor_email: r.actorEmail, method: r.method, path: r.path, status: r.status,
});

function page(db: Db, where: SQL | undefined, { limit, offset }: AuditPage) {
  return db.select().from(auditEvents).where(and(eq(auditEvents.category, 'security'), where))
    .orderBy(desc(auditEvents.createdAt), desc(auditEvents.id))
    .limit(limit)
    .offset(offset);
}

/** The signed-in user's own trail: events whose actor is that user, never another's (an unknown email tried has no actor). */
export async function listOwnSecurityEvents(db: Db, userId: string, p: AuditPage) {
  return (await page(db, eq(auditEvents.actorId, userId), p)).map(presentOwn);
}

export interface SecurityEventFilter { userId?: string; type?: string }

/** Every account's trail, optionally one account's (`actor_id`) and one type. */
export async function listSecurityEvents(db: Db, filter: SecurityEventFilter, p: AuditPage) {
  const where = and(
    filter.userId ? eq(auditEvents.actorId, filter.userId) : undefined,
    filter.type ? eq(auditEvents.type, filter.type) : undefined,
  );
  return (await page(db, where, p)).map(presentAdmin);
}
