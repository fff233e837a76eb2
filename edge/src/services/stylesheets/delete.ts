import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { isForeignKeyViolation } from '../../db/errors.js';
import { findStylesheet } from './find.js';
import { firstUser, stylesheetInUse } from './users.js';

/** Removes a stylesheet no template version names (409 naming one that does). */
export async function deleteStylesheet(db: Db, projectId: string, id: string): Promise<void> {
  let deleted: { id: string } | undefined;
  try {
    ({ rows: [deleted] } = await db.execute<{ id: string }>(sql`
      delete from stylesheets s where s.id = ${id} and s.project_id = ${projectId}
        and not exists (select 1 from template_versions v where v.stylesheet_id = s.id)
      returning s.id`));
  } catch (e) {
    // A version naming it was created meanwhile: the foreign key (restrict) refused.
    if (!isForeignKeyViolation(e)) throw e;
  }
  if (deleted) return;
  const found = await findStylesheet(db, projectId, id);
  throw stylesheetInUse(found.name, await firstUser(db, projectId, id, false),
    'change those versions\' stylesheet_id or delete them first');
}
