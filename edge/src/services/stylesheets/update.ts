import { sql } from 'drizzle-orm';
import { stylesheets } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import type { UpdateStylesheetInput } from '../../contracts/stylesheet.js';
import { stylesheetNameTaken } from './create.js';
import { findStylesheet } from './find.js';
import { presentStylesheet } from './present.js';
import { firstUser, stylesheetInUse } from './users.js';

/**
 * Renames a stylesheet or changes its CSS. CSS that an activated template
 * version renders with is frozen with it (rollback renders exactly what was
 * live): that change is refused with 409; create a new stylesheet and a new
 * version naming it. A rename changes no render and is always allowed.
 */
export async function updateStylesheet(db: Db, projectId: string, id: string, input: UpdateStylesheetInput) {
  const css = input.css ?? null;
  let row: typeof stylesheets.$inferSelect | undefined;
  // One transaction of two statements. The first locks the templates with a
  // version naming this stylesheet, as activation locks its template first: an
  // activation in flight commits before the second statement, which reads with
  // a fresh snapshot and so sees the version it froze.
  const lockUsers = db.execute(sql`
    select t.id from templates t
    where t.project_id = ${projectId}
      and exists (select 1 from template_versions v where v.template_id = t.id and v.stylesheet_id = ${id})
    order by t.id for update`);
  const update = db.update(stylesheets).set({
    ...(input.name !== undefined ? { name: input.name } : {}),
    ...(input.css !== undefined ? { css: input.css } : {}),
    updatedAt: sql`now()`,
  }).where(sql`${stylesheets.projectId} = ${projectId} and ${stylesheets.id} = ${id}
    and (${css}::text is null or ${stylesheets.css} = ${css}::text or not exists (
      select 1 from template_versions v where v.stylesheet_id = ${stylesheets.id} and v.first_activated_at is not null))`)
    .returning();
  try {
    [, [row]] = css === null ? [undefined, await update] : await db.batch([lockUsers, update]);
  } catch (e) {
    if (isUniqueViolation(e) && input.name !== undefined) throw stylesheetNameTaken(input.name);
    throw e;
  }
  if (!row) {
    const found = await findStylesheet(db, projectId, id);
    throw stylesheetInUse(found.name, await firstUser(db, projectId, id, true),
      'its css cannot change once a version using it was activated; create a new stylesheet');
  }
  return { stylesheet: presentStylesheet(row) };
}
