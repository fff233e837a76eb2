// The transactional outbox: a row per event that notifies the outside world,
// written in the same transaction as the change it reports. The webhook
// dispatcher hands rows over; `handed_over_at` says it has.
import { sql } from 'drizzle-orm';
import { bigserial, index, jsonb, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';
import { projects } from './tenancy.js';

export const outbox = pgTable('outbox', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  // `inbound.received`, `email.sent`, …
  event: text('event').notNull(),
  // The envelope's `data`.
  data: jsonb('data').$type<Record<string, unknown>>().notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  handedOverAt: timestamp('handed_over_at', { withTimezone: true }),
  // Set once the project's EventStream object holds the event; the cron sweep
  // hands over rows whose stream hand-over failed every retry.
  streamedAt: timestamp('streamed_at', { withTimezone: true }),
  // The webhooks an `inbound.received` event goes to when an inbound rule chose
  // them (docs/inbound-rules.md); null: every subscribed webhook.
  webhookIds: uuid('webhook_ids').array(),
}, (t) => [
  // The sweep's question: rows never handed over.
  index('outbox_pending_idx').on(t.createdAt).where(sql`${t.handedOverAt} is null`),
  index('outbox_unstreamed_idx').on(t.createdAt).where(sql`${t.streamedAt} is null`),
  // The hourly purge of rows handed over before the retention (sweep.ts, purgeOutbox).
  index('outbox_handed_over_at_idx').on(t.handedOverAt).where(sql`${t.handedOverAt} is not null`),
]);
