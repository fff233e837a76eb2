import { and, eq } from 'drizzle-orm';
import { stylesheets } from '@edgemail/schema';
import { presentStylesheet } from '../stylesheets/present.js';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** Stylesheets as `GET /api/v1/stylesheets/{id}` returns them (a project has few: no index of their own). */
export const stylesheetSource = exportSource<Cursor>({
  type: 'stylesheet',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({ ...stylesheetColumns, cursorAt: cursorText(stylesheets.createdAt) }).from(stylesheets)
      .where(and(eq(stylesheets.projectId, projectId), olderThan(cursor, stylesheets.createdAt, stylesheets.id)))
      .orderBy(...newestFirst(stylesheets.createdAt, stylesheets.id, 'desc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, presentStylesheet);
  },
});

const stylesheetColumns = {
  id: stylesheets.id, projectId: stylesheets.projectId, name: stylesheets.name, css: stylesheets.css,
  createdAt: stylesheets.createdAt, updatedAt: stylesheets.updatedAt,
};
