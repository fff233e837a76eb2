import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { conflict } from '../errors.js';
import { findVersion, versionNotFound, versionRecord } from './find.js';

export const activeVersionRefused = () => conflict('cannot delete the active version; activate another first');

/**
 * Removes a version that sends do not resolve, with its localizations. The
 * template row is locked first (as activation locks it), so an activation of
 * this version committing meanwhile is seen, and the delete refused. Its
 * number is not given again: `highest_version` keeps it.
 */
export async function deleteVersion(db: Db, projectId: string, templateId: string, versionId: string): Promise<void> {
  const { rows: [deleted] } = await db.execute<{ id: string }>(sql`
    with t as (select id, active_version_id from templates where id = ${templateId} and project_id = ${projectId} for update)
    delete from template_versions v using t
    where v.id = ${versionId} and v.template_id = t.id and v.project_id = ${projectId}
      and t.active_version_id is distinct from v.id
    returning v.id`);
  if (deleted) return;
  if (await findVersion(db, projectId, templateId, versionId)) throw activeVersionRefused();
  await versionRecord(db, projectId, templateId, versionId); // 404 naming the template or the version
  throw versionNotFound();
}
