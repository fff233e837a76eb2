// Whether a project exists: a platform credential names its project in a
// header on every non-admin request, so the query is prepared.
import { eq, sql } from 'drizzle-orm';
import { projects } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { prepared } from '../../db/prepared.js';

const projectById = prepared((db) => db
  .select({ id: projects.id })
  .from(projects)
  .where(eq(projects.id, sql.placeholder('id')))
  .prepare('project_by_id'));

export async function projectExists(db: Db, id: string): Promise<boolean> {
  const [row] = await projectById(db).execute({ id });
  return row !== undefined;
}
