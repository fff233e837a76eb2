import { and, eq, sql } from 'drizzle-orm';
import { templates } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { TemplateCursor } from '../../contracts/template.js';
import { cursorTimestamp } from '../inbound-emails/present.js';
import { presentTemplate } from './present.js';

/**
 * A page of the project's templates, newest first by `(created_at, id)`,
 * read along `templates_project_id_created_at_idx`, without their versions
 * (`GET .../{templateId}` has them). One row beyond the page says whether
 * there is a next one; the cursor keeps `created_at`'s microseconds, which a
 * JavaScript Date drops, so that no row is skipped or repeated.
 */
export async function listTemplates(db: Db, projectId: string, limit: number, cursor?: TemplateCursor) {
  const rows = await db.select({
    row: templates,
    micros: sql<number>`(extract(microseconds from ${templates.createdAt})::int % 1000)`.mapWith(Number),
  }).from(templates)
    .where(and(
      eq(templates.projectId, projectId),
      cursor ? sql`(${templates.createdAt}, ${templates.id}) < (${cursor.before}::timestamptz, ${cursor.before_id}::uuid)` : undefined,
    ))
    .orderBy(sql`${templates.createdAt} desc`, sql`${templates.id} desc`)
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return {
    templates: page.map((r) => presentTemplate(r.row)),
    next: rows.length > limit && last ? { before: cursorTimestamp(last.row.createdAt, last.micros), before_id: last.row.id } : null,
  };
}
