import { and, eq, sql } from 'drizzle-orm';
import { webhookDeliveries } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { webhookExists } from './find.js';
import { deliveryColumns, presentDelivery } from './present.js';

/**
 * Queues the event of a delivery again, whatever that delivery's status: a
 * new delivery (same event, `event_at` and data; `redelivery_of` naming the
 * original; no outbox row) due now, with attempts of its own. One statement
 * copying the original, so a webhook deleted meanwhile yields nothing rather
 * than a half-made row. The caller wakes the project's dispatcher.
 */
export async function redeliver(db: Db, projectId: string, webhookId: string, deliveryId: string) {
  const d = webhookDeliveries;
  // Every column of the table, in its order (drizzle checks both): a column added later must be decided here.
  const copy = db.select({
    id: sql`gen_random_uuid()`.as('id'), webhookId: d.webhookId, projectId: d.projectId, outboxId: sql`null::bigint`.as('outbox_id'),
    redeliveryOf: d.id, event: d.event, eventAt: d.eventAt, data: d.data,
    status: sql`'pending'::webhook_delivery_status`.as('status'), attempts: sql`0`.as('attempts'), nextAttemptAt: sql`now()`.as('next_attempt_at'),
    lastStatusCode: sql`null::integer`.as('last_status_code'), lastError: sql`null::text`.as('last_error'),
    createdAt: sql`now()`.as('created_at'), completedAt: sql`null::timestamptz`.as('completed_at'),
    // A redelivery is sent at once, outside any ordering, and belongs to no replay.
    orderingKey: sql`null::text`.as('ordering_key'), eventSeq: sql`null::bigint`.as('event_seq'), replayId: sql`null::uuid`.as('replay_id'),
  }).from(d).where(and(eq(d.projectId, projectId), eq(d.webhookId, webhookId), eq(d.id, deliveryId)));
  const [row] = await db.insert(d).select(copy).returning(deliveryColumns);
  if (row) return { delivery: presentDelivery(row, []) };
  const [webhook] = await webhookExists(db, projectId, webhookId);
  throw notFound(webhook ? 'delivery not found' : 'webhook not found');
}
