// Webhooks a project subscribes, and the record of every delivery to them:
// one delivery per webhook and outbox row (or per redelivery), one attempt row
// per request made.
import { sql } from 'drizzle-orm';
import { bigint, bigserial, boolean, index, integer, jsonb, pgEnum, pgTable, text, timestamp, uniqueIndex, uuid, type AnyPgColumn } from 'drizzle-orm/pg-core';
import { projects } from './tenancy.js';

export const webhooks = pgTable('webhooks', {
  id: uuid('id').primaryKey().defaultRandom(),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  url: text('url').notNull(),
  // Event types, or `{*}` for all.
  events: text('events').array().notNull(),
  // Exact addresses and `*@<domain>` patterns, lower case; empty matches every sender.
  filters: text('filters').array().notNull().default(sql`'{}'::text[]`),
  // AES-GCM under database.crypto.encryption_key (context `webhooks.secret`); never hashed, never logged.
  secretSealed: text('secret_sealed').notNull(),
  secretRotatedAt: timestamp('secret_rotated_at', { withTimezone: true }),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  // Events of one email or inbound message are delivered in order (a pending one holds back the later ones of its key).
  ordered: boolean('ordered').notNull().default(false),
  // Set when the webhook was disabled (every attempt failing for `webhook.disable_after`); nothing is enqueued meanwhile.
  disabledAt: timestamp('disabled_at', { withTimezone: true }),
  disabledReason: text('disabled_reason'),
  // The failure span: the start of the first failed attempt since the last success, and the failed attempts since.
  failingSince: timestamp('failing_since', { withTimezone: true }),
  consecutiveFailures: integer('consecutive_failures').notNull().default(0),
}, (t) => [
  index('webhooks_project_id_created_at_idx').on(t.projectId, t.createdAt),
]);

export const webhookDeliveryStatus = pgEnum('webhook_delivery_status', ['pending', 'succeeded', 'failed']);

export const webhookDeliveries = pgTable('webhook_deliveries', {
  id: uuid('id').primaryKey().defaultRandom(),
  webhookId: uuid('webhook_id').notNull().references(() => webhooks.id, { onDelete: 'cascade' }),
  projectId: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  // The event it carries; null for a redelivery, which names its original instead.
  outboxId: bigint('outbox_id', { mode: 'number' }),
  redeliveryOf: uuid('redelivery_of').references((): AnyPgColumn => webhookDeliveries.id, { onDelete: 'set null' }),
  event: text('event').notNull(),
  // The envelope's `timestamp`: when the event happened, the same on every attempt.
  eventAt: timestamp('event_at', { withTimezone: true }).notNull(),
  data: jsonb('data').$type<Record<string, unknown>>().notNull(),
  status: webhookDeliveryStatus('status').notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  // While pending: when the next attempt is due, or, while one is in flight,
  // when its lease ends (a dispatcher that died mid-attempt is retried then).
  nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true }),
  lastStatusCode: integer('last_status_code'),
  lastError: text('last_error'),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull().defaultNow(),
  completedAt: timestamp('completed_at', { withTimezone: true }),
  // For an ordered webhook: the email or inbound message the event is about (null: not ordered).
  orderingKey: text('ordering_key'),
  // The outbox row's id, the order events happened in (originals and replays; null for a redelivery).
  eventSeq: bigint('event_seq', { mode: 'number' }),
  // The replay that made it (POST /api/v1/webhooks/{id}/replay); null otherwise.
  replayId: uuid('replay_id'),
}, (t) => [
  // One delivery per webhook and outbox row: the hand-over and the sweep can never both deliver it.
  uniqueIndex('webhook_deliveries_webhook_id_outbox_id_idx').on(t.webhookId, t.outboxId),
  // Keyset paging of a webhook's deliveries, newest first.
  index('webhook_deliveries_webhook_id_created_at_idx').on(t.webhookId, t.createdAt, t.id),
  // The dispatcher's question: what is due in this project.
  index('webhook_deliveries_due_idx').on(t.projectId, t.nextAttemptAt).where(sql`${t.status} = 'pending'`),
  // The retention purge's question: finished deliveries older than the cutoff (delivery-records/purge.ts).
  index('webhook_deliveries_completed_at_idx').on(t.completedAt).where(sql`${t.status} <> 'pending'`),
  // Deleting a delivery sets its redeliveries' redelivery_of to null: without this, each deleted row scans the table.
  index('webhook_deliveries_redelivery_of_idx').on(t.redeliveryOf).where(sql`${t.redeliveryOf} is not null`),
  // Ordered delivery's question: is an earlier event of this key still pending for this webhook.
  index('webhook_deliveries_ordering_idx').on(t.webhookId, t.orderingKey, t.eventSeq).where(sql`${t.status} = 'pending' and ${t.orderingKey} is not null`),
  // The replay route's question: is a replay to this webhook still running.
  index('webhook_deliveries_running_replay_idx').on(t.webhookId).where(sql`${t.status} = 'pending' and ${t.replayId} is not null`),
]);

export const webhookAttempts = pgTable('webhook_attempts', {
  id: bigserial('id', { mode: 'number' }).primaryKey(),
  deliveryId: uuid('delivery_id').notNull().references(() => webhookDeliveries.id, { onDelete: 'cascade' }),
  attempt: integer('attempt').notNull(),
  startedAt: timestamp('started_at', { withTimezone: true }).notNull(),
  durationMs: integer('duration_ms').notNull(),
  // The receiver's HTTP status; null when no response came (error says why).
  statusCode: integer('status_code'),
  error: text('error'),
  // The first bytes of the response body, as text.
  responseExcerpt: text('response_excerpt').notNull().default(''),
}, (t) => [
  uniqueIndex('webhook_attempts_delivery_id_attempt_idx').on(t.deliveryId, t.attempt),
]);
