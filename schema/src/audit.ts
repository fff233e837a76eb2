// The audit log: project activity and account security events in one table.
import { index, integer, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const auditEvents = pgTable('audit_events', {
  id: uuid('id').primaryKey().defaultRandom(),
  // `project` for project activity, `security` for an account's security trail.
  category: text('category').notNull(),
  type: text('type').notNull(),
  projectId: uuid('project_id'),
  actorId: uuid('actor_id'),
  actorEmail: text('actor_email'),
  clientIp: text('client_ip'),
  method: text('method'),
  path: text('path'),
  status: integer('status'),
  detail: text('detail'),
  // The client's User-Agent, on account security events (at most 512 characters).
  userAgent: text('user_agent'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  index('audit_events_project_id_created_at_idx').on(t.projectId, t.createdAt),
  index('audit_events_actor_id_created_at_idx').on(t.actorId, t.createdAt),
  index('audit_events_created_at_idx').on(t.createdAt),
]);
