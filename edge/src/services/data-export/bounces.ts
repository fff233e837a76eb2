import { and, eq } from 'drizzle-orm';
import { bounces } from '@edgemail/schema';
import { bounceColumns, presentBounce } from '../bounces/present.js';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** Bounces and complaints recorded against the project's emails, as `GET /api/v1/bounces/{id}` returns them. */
export const bounceSource = exportSource<Cursor>({
  type: 'bounce',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({ ...bounceColumns, cursorAt: cursorText(bounces.createdAt) }).from(bounces)
      .where(and(eq(bounces.projectId, projectId), olderThan(cursor, bounces.createdAt, bounces.id)))
      .orderBy(...newestFirst(bounces.createdAt, bounces.id, 'desc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, presentBounce);
  },
});
