import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { conflict } from '../errors.js';

/**
 * The first template version naming the stylesheet (an activated one first
 * when `activatedOnly`), as `template "<name>" version <n>`, for a 409.
 */
export async function firstUser(db: Db, projectId: string, id: string, activatedOnly: boolean): Promise<string | undefined> {
  const { rows: [user] } = await db.execute<{ name: string; version: number }>(sql`
    select t.name, v.version from template_versions v join templates t on t.id = v.template_id
    where v.stylesheet_id = ${id} and v.project_id = ${projectId}
      and (not ${activatedOnly} or v.first_activated_at is not null)
    order by t.name, v.version limit 1`);
  return user ? `template "${user.name}" version ${user.version}` : undefined;
}

export const stylesheetInUse = (name: string, user: string | undefined, what: string) =>
  conflict(`stylesheet "${name}" is used by ${user ?? 'a template version'}; ${what}`);
