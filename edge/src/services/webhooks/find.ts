import { and, eq } from 'drizzle-orm';
import { webhooks } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

/** The query asking whether the project has this webhook (for `db.batch` or awaiting alone). */
export const webhookExists = (db: Db, projectId: string, id: string) =>
  db.select({ id: webhooks.id }).from(webhooks).where(and(eq(webhooks.projectId, projectId), eq(webhooks.id, id)));
