// Message streams (docs/sending.md, "Streams"): the kind of mail a send is,
// so rules differ by it (broadcast mail carries one-click unsubscribe and
// needs DMARC) and suppressions may hold for one stream only. `transactional`
// and `broadcast` always exist; a project may define more, each of one kind.
import { doublePrecision, index, pgTable, text, timestamp, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { projects } from './tenancy.js';

/** A project-defined stream: a name and the kind whose rules it follows. */
export const messageStreams = pgTable('message_streams', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  // Lower case `[a-z0-9][a-z0-9_-]{0,31}`; never `transactional` or `broadcast` (built in).
  name: text('name').notNull(),
  // `transactional` or `broadcast`.
  kind: text('kind').notNull(),
  description: text('description').notNull().default(''),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('message_streams_project_id_name_idx').on(t.projectId, t.name),
]);

/**
 * One recipient's unsubscribe from one email's stream (a one-click POST or a
 * mail to the `mailto:` of List-Unsubscribe): what the unsubscribe rate
 * counts. Once per email; the suppression it adds is the one that acts.
 */
export const unsubscribes = pgTable('unsubscribes', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  // No foreign key: the count outlives a deleted email.
  emailId: uuid('email_id').notNull(),
  stream: text('stream').notNull(),
  address: text('address').notNull(),
  // `one_click` (the HTTPS link) or `mailto`.
  method: text('method').notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
}, (t) => [
  uniqueIndex('unsubscribes_email_id_idx').on(t.emailId),
  index('unsubscribes_project_id_created_at_idx').on(t.projectId, t.createdAt),
]);

/**
 * A project's bulk-sender health (docs/analytics.md, "Sender health"): set
 * when its complaint rate crosses `sending.complaint_rate_threshold` (the
 * crossing fires its audit event and webhook once), cleared when the rate is
 * back under it, so the next crossing fires again.
 */
export const senderHealth = pgTable('sender_health', {
  projectId: uuid('project_id').primaryKey().references(() => projects.id, { onDelete: 'cascade' }),
  complaintRate: doublePrecision('complaint_rate').notNull().default(0),
  // When the rate crossed the threshold; null while under it.
  overThresholdSince: timestamp('over_threshold_since', { withTimezone: true }),
  checkedAt: timestamp('checked_at', { withTimezone: true }).notNull().defaultNow(),
});
