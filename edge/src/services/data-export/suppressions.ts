import { and, eq } from 'drizzle-orm';
import { suppressions } from '@edgemail/schema';
import { presentSuppression, suppressionColumns } from '../suppressions/present.js';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** Suppressions as `GET /api/v1/suppressions?include_expired=true` lists them: expired entries too. */
export const suppressionSource = exportSource<Cursor>({
  type: 'suppression',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({ ...suppressionColumns, cursorAt: cursorText(suppressions.createdAt) }).from(suppressions)
      .where(and(eq(suppressions.projectId, projectId), olderThan(cursor, suppressions.createdAt, suppressions.id)))
      .orderBy(...newestFirst(suppressions.createdAt, suppressions.id, 'desc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, presentSuppression);
  },
});
