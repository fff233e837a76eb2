import { desc, eq } from 'drizzle-orm';
import { webhooks } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { presentWebhook, webhookColumns } from './present.js';

/** The project's webhooks, newest first, without their secrets. */
export async function listWebhooks(db: Db, projectId: string) {
  const rows = await db.select(webhookColumns).from(webhooks)
    .where(eq(webhooks.projectId, projectId))
    .orderBy(desc(webhooks.createdAt), desc(webhooks.id));
  return { webhooks: rows.map(presentWebhook) };
}
