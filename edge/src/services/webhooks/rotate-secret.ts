import { and, eq, sql } from 'drizzle-orm';
import { webhooks } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { presentWebhook, webhookColumns } from './present.js';
import { newWebhookSecret } from './secret.js';

/**
 * Replaces the signing secret; the old one is gone at once. Deliveries read
 * the secret at every attempt, so the next attempt (of any delivery) is
 * signed with the new one.
 */
export async function rotateWebhookSecret(db: Db, encryptionKey: string, projectId: string, id: string) {
  const { secret, sealed } = await newWebhookSecret(encryptionKey);
  const [row] = await db.update(webhooks)
    .set({ secretSealed: sealed, secretRotatedAt: sql`now()` })
    .where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, id)))
    .returning(webhookColumns);
  if (!row) throw notFound('webhook not found');
  return { webhook: { ...presentWebhook(row), secret } };
}
