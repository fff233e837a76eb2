import { and, eq, sql } from 'drizzle-orm';
import { webhooks } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { presentWebhook, webhookColumns } from './present.js';

/**
 * Enables a webhook again and starts its failure span afresh (no failures,
 * no `failing_since`), so a webhook disabled for failing is given the whole
 * `webhook.disable_after` again. Enabling an enabled webhook resets its span too.
 */
export async function enableWebhook(db: Db, projectId: string, id: string) {
  const [row] = await db.update(webhooks)
    .set({ disabledAt: null, disabledReason: null, failingSince: null, consecutiveFailures: sql`0` })
    .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, id)))
    .returning(webhookColumns);
  if (!row) throw notFound('webhook not found');
  return { webhook: presentWebhook(row) };
}
