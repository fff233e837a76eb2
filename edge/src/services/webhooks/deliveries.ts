import { and, asc, desc, eq, inArray, sql } from 'drizzle-orm';
import { webhookAttempts, webhookDeliveries } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import type { DeliveryCursor, DeliveryStatus } from '../../contracts/webhook.js';
import { webhookExists } from './find.js';
import { attemptColumns, deliveryColumns, presentDelivery, type AttemptRow, type DeliveryRow } from './present.js';

export interface DeliveryListQuery {
  limit: number;
  status?: DeliveryStatus;
  /** `created_at` and id of the last row seen: the page starts strictly after it. */
  cursor?: DeliveryCursor;
}

/**
 * A page of one webhook's deliveries, newest first by `(created_at, id)`, each
 * with its attempt log. As the inbound list: a row comparison against the
 * cursor, `before` sent as text so microseconds survive, one row beyond the
 * page to tell whether there is a next. The page is a backward range scan of
 * `webhook_deliveries_webhook_id_created_at_idx`; the webhook's existence is
 * asked in the same round trip, the attempts of the whole page in one more.
 */
export async function listDeliveries(db: Db, projectId: string, webhookId: string, query: DeliveryListQuery) {
  const { limit, status, cursor } = query;
  const [webhook, rows] = await db.batch([
    webhookExists(db, projectId, webhookId),
    db.select(deliveryColumns).from(webhookDeliveries)
      .where(and(
        eq(webhookDeliveries.webhookId, webhookId),
        eq(webhookDeliveries.projectId, projectId),
        status ? eq(webhookDeliveries.status, status) : undefined,
        cursor ? sql`(${webhookDeliveries.createdAt}, ${webhookDeliveries.id}) < (${cursor.before}::timestamptz, ${cursor.before_id}::uuid)` : undefined,
      ))
      .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
      .limit(limit + 1),
  ]);
  if (!webhook.length) throw notFound('webhook not found');

  const deliveries = await presentWithAttempts(db, projectId, rows.slice(0, limit));
  const last = deliveries.at(-1);
  return { deliveries, next: rows.length > limit && last ? { before: last.created_at, before_id: last.id } : null };
}

/** Deliveries as the API shows them, each with its attempt log: the attempts of all of them in one query. */
export async function presentWithAttempts(db: Db, projectId: string, rows: DeliveryRow[]) {
  const attempts = rows.length
    ? await db.select(attemptColumns).from(webhookAttempts)
      .innerJoin(webhookDeliveries, eq(webhookDeliveries.id, webhookAttempts.deliveryId))
      .where(and(eq(webhookDeliveries.projectId, projectId), inArray(webhookAttempts.deliveryId, rows.map((r) => r.id))))
      .orderBy(asc(webhookAttempts.deliveryId), asc(webhookAttempts.attempt))
    : [];
  const byDelivery = new Map<string, AttemptRow[]>();
  for (const a of attempts) {
    const list = byDelivery.get(a.deliveryId);
    if (list) list.push(a);
    else byDelivery.set(a.deliveryId, [a]);
  }
  return rows.map((r) => presentDelivery(r, byDelivery.get(r.id) ?? []));
}
