import { and, asc, eq, gt } from 'drizzle-orm';
import { webhookDeliveries, webhooks } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { deliveryColumns } from '../webhooks/present.js';
import { presentWithAttempts } from '../webhooks/deliveries.js';
import { cursorText, newestFirst, olderThan, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** The webhook being read, and where in its deliveries (null: from its newest). */
interface DeliveryCursor { webhook: string; after: Cursor | null }

/** The project's first webhook by id after `after` (or its first), or null. */
async function nextWebhook(db: Db, projectId: string, after: string | null): Promise<string | null> {
  const [row] = await db.select({ id: webhooks.id }).from(webhooks)
    .where(and(eq(webhooks.projectId, projectId), after === null ? undefined : gt(webhooks.id, after)))
    .orderBy(asc(webhooks.id))
    .limit(1);
  return row?.id ?? null;
}

/**
 * Every delivery the project's webhooks keep, each with its attempt log, as
 * `GET /api/v1/webhooks/{id}/deliveries` lists them: one webhook after the
 * other (by id), each newest first off `webhook_deliveries_webhook_id_created_at_idx`,
 * so a page never scans another project's deliveries.
 */
export const webhookDeliverySource = exportSource<DeliveryCursor>({
  type: 'webhook_delivery',
  async read({ db, projectId }, cursor) {
    const webhook = cursor?.webhook ?? await nextWebhook(db, projectId, null);
    if (webhook === null) return { records: [], next: null };
    const rows = await db.select({ ...deliveryColumns, cursorAt: cursorText(webhookDeliveries.createdAt) }).from(webhookDeliveries)
      .where(and(
        eq(webhookDeliveries.webhookId, webhook), eq(webhookDeliveries.projectId, projectId),
        olderThan(cursor?.after ?? null, webhookDeliveries.createdAt, webhookDeliveries.id),
      ))
      .orderBy(...newestFirst(webhookDeliveries.createdAt, webhookDeliveries.id, 'asc'))
      .limit(PAGE_ROWS);

    const records = await presentWithAttempts(db, projectId, rows);
    const last = rows.at(-1);
    if (rows.length === PAGE_ROWS && last) return { records, next: { webhook, after: { at: last.cursorAt, id: last.id } } };
    const following = await nextWebhook(db, projectId, webhook);
    return { records, next: following === null ? null : { webhook: following, after: null } };
  },
});
