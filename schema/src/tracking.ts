// Open and click tracking (docs/tracking.md): each domain's choice and its
// custom tracking host, and the daily counts analytics reads. The opens and
// clicks themselves are events (outbox rows, webhooks, the console stream);
// no per-request row is kept beyond them.
import { bigint, boolean, date, pgTable, primaryKey, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { projects } from './tenancy.js';
import { domains } from './mail.js';

/** A domain's tracking: off unless set; a send's own `tracking` overrides it. */
export const domainTracking = pgTable('domain_tracking', {
  domainId: uuid('domain_id').primaryKey().references(() => domains.id, { onDelete: 'cascade' }),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  opens: boolean('opens').notNull().default(false),
  clicks: boolean('clicks').notNull().default(false),
  // A custom tracking host under the domain (`links.acme.test`), lower case;
  // used only once a check found its CNAME to the service's host.
  host: text('host'),
  hostVerifiedAt: timestamp('host_verified_at', { withTimezone: true }),
  updatedAt: timestamp('updated_at', { withTimezone: true }).notNull().defaultNow(),
});

/**
 * Opens and clicks per project, UTC day of the request, from-domain and tag
 * (`''` counts every one, as `email_daily_counts`), human and machine apart.
 */
export const trackingDailyCounts = pgTable('tracking_daily_counts', {
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  day: date('day', { mode: 'string' }).notNull(),
  fromDomain: text('from_domain').notNull(),
  tag: text('tag').notNull().default(''),
  // `open` or `click`.
  kind: text('kind').notNull(),
  machine: boolean('machine').notNull(),
  count: bigint('count', { mode: 'number' }).notNull().default(0),
}, (t) => [
  primaryKey({ columns: [t.projectId, t.day, t.fromDomain, t.tag, t.kind, t.machine] }),
]);
