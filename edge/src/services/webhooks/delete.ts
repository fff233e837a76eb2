import { and, eq } from 'drizzle-orm';
import { webhooks } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';

/**
 * Removes a webhook; its deliveries and their attempts go with it (foreign-key
 * cascade), so pending retries stop: the dispatcher finds nothing to attempt.
 */
export async function deleteWebhook(db: Db, projectId: string, id: string): Promise<void> {
  const deleted = await db.delete(webhooks)
    .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, id)))
    .returning({ id: webhooks.id });
  if (!deleted.length) throw notFound('webhook not found');
}
