import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict } from '../errors.js';
import type { CreateVersionInput } from '../../contracts/template.js';
import { findTemplate, versionRecord } from './find.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import { stylesheetRefused } from './frozen.js';

export const versionCollision = () => conflict('version number collision, retry');

/**
 * A new draft version numbered one above the highest the template ever had.
 * One statement bumps `highest_version` and inserts the row it returns, so a
 * number is never reused and never skipped: the template row's lock queues
 * concurrent creates, and when the statement fails (a collision on the unique
 * (template_id, version) index, a stylesheet deleted meanwhile) neither write
 * stays. Creating a version does not change what sends resolve.
 */
export async function createVersion(db: Db, projectId: string, templateId: string, input: CreateVersionInput) {
  const stylesheetId = input.stylesheet_id ?? null;
  let created: { id: string } | undefined;
  try {
    ({ rows: [created] } = await db.execute<{ id: string }>(sql`
      with bumped as (
        update templates set highest_version = highest_version + 1
        where id = ${templateId} and project_id = ${projectId}
          and (${stylesheetId}::uuid is null
               or exists (select 1 from stylesheets s where s.id = ${stylesheetId}::uuid and s.project_id = ${projectId}))
        returning id, project_id, highest_version)
      insert into template_versions (template_id, project_id, version, stylesheet_id, sample_data)
      select id, project_id, highest_version, ${stylesheetId}::uuid, ${input.sample_data ?? null}::text from bumped
      returning id`));
  } catch (e) {
    if (isUniqueViolation(e)) throw versionCollision();
    if (isForeignKeyViolation(e)) throw stylesheetRefused();
    throw e;
  }
  if (!created) {
    await findTemplate(db, projectId, templateId); // 404 when the template is not the project's
    throw stylesheetRefused();
  }
  return { version: await versionRecord(db, projectId, templateId, created.id) };
}
