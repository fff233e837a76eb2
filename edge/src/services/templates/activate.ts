import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { findTemplate, versionNotFound } from './find.js';
import { getTemplate } from './get.js';

/**
 * Makes a version the one sends resolve, in one statement: the template row
 * is locked first (as a version delete locks it), the version's
 * `first_activated_at` is set if it was null (freezing its content), and
 * `active_version_id` points at it. Activating an earlier version rolls back.
 */
export async function activateVersion(db: Db, projectId: string, templateId: string, versionId: string) {
  const { rows: [activated] } = await db.execute<{ id: string }>(sql`
    with t as (select id from templates where id = ${templateId} and project_id = ${projectId} for update),
    v as (
      update template_versions tv set first_activated_at = coalesce(tv.first_activated_at, now())
      from t where tv.id = ${versionId} and tv.template_id = t.id and tv.project_id = ${projectId}
      returning tv.id, tv.template_id)
    update templates set active_version_id = v.id, updated_at = now()
    from v where templates.id = v.template_id
    returning templates.id`);
  if (!activated) {
    await findTemplate(db, projectId, templateId); // 404 naming the template first
    throw versionNotFound();
  }
  return getTemplate(db, projectId, templateId);
}
