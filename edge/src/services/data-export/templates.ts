import { and, eq } from 'drizzle-orm';
import { templates } from '@edgemail/schema';
import { presentTemplate } from '../templates/present.js';
import { cursorText, newestFirst, olderThan, pageOf, PAGE_ROWS, type Cursor } from './keyset.js';
import { exportSource } from './source.js';

/** Templates as `GET /api/v1/templates` lists them; their versions are `template_version` lines. */
export const templateSource = exportSource<Cursor>({
  type: 'template',
  async read({ db, projectId }, cursor) {
    const rows = await db.select({
      id: templates.id, projectId: templates.projectId, name: templates.name, description: templates.description,
      defaultLanguage: templates.defaultLanguage, activeVersionId: templates.activeVersionId, highestVersion: templates.highestVersion,
      createdAt: templates.createdAt, updatedAt: templates.updatedAt, cursorAt: cursorText(templates.createdAt),
    }).from(templates)
      .where(and(eq(templates.projectId, projectId), olderThan(cursor, templates.createdAt, templates.id)))
      .orderBy(...newestFirst(templates.createdAt, templates.id, 'desc'))
      .limit(PAGE_ROWS);
    return pageOf(rows, presentTemplate);
  },
});
