import { and, eq } from 'drizzle-orm';
import { webhooks } from '@edgemail/schema';
import { presentWebhook, webhookColumns } from '../webhooks/present.js';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** Webhooks as `GET /api/v1/webhooks` lists them: never the signing secret. */
export const webhookSource = exportSource<Cursor>({
  type: 'webhook',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({ ...webhookColumns, cursorAt: cursorText(webhooks.createdAt) }).from(webhooks)
      .where(and(eq(webhooks.projectId, projectId), olderThan(cursor, webhooks.createdAt, webhooks.id)))
      .orderBy(...newestFirst(webhooks.createdAt, webhooks.id, 'asc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, presentWebhook);
  },
});
