import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import type { UpdateVersionInput } from '../../contracts/template.js';
import { findVersion, versionNotFound, versionRecord } from './find.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import { stylesheetRefused, versionFrozen } from './frozen.js';

/**
 * Changes a draft's `stylesheet_id` or `sample_data` (a field left out stays).
 * The statement matches only a version never activated: an activation
 * committing first makes it match nothing, and the answer is 409.
 */
export async function updateVersion(db: Db, projectId: string, templateId: string, versionId: string, input: UpdateVersionInput) {
  const setStylesheet = input.stylesheet_id !== undefined;
  const stylesheetId = input.stylesheet_id ?? null;
  const setSample = input.sample_data !== undefined;
  let updated: { id: string } | undefined;
  try {
    ({ rows: [updated] } = await db.execute<{ id: string }>(sql`
      update template_versions set
        stylesheet_id = case when ${setStylesheet} then ${stylesheetId}::uuid else stylesheet_id end,
        sample_data = case when ${setSample} then ${input.sample_data ?? null}::text else sample_data end,
        updated_at = now()
      where id = ${versionId} and template_id = ${templateId} and project_id = ${projectId}
        and first_activated_at is null
        and (${stylesheetId}::uuid is null
             or exists (select 1 from stylesheets s where s.id = ${stylesheetId}::uuid and s.project_id = ${projectId}))
      returning id`));
  } catch (e) {
    if (isForeignKeyViolation(e)) throw stylesheetRefused();
    throw e;
  }
  if (!updated) {
    const found = await findVersion(db, projectId, templateId, versionId);
    if (!found) {
      await versionRecord(db, projectId, templateId, versionId); // 404 naming the template or the version
      throw versionNotFound();
    }
    if (found.version.firstActivatedAt) throw versionFrozen(found.version.version);
    throw stylesheetRefused();
  }
  return { version: await versionRecord(db, projectId, templateId, versionId) };
}
