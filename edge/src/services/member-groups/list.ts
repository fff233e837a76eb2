import { sql } from 'drizzle-orm';
import { memberGroups } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { groupColumns, presentGroup, type MemberGroupRow } from './present.js';

/** The project's groups by name. */
export async function listMemberGroups(db: Db, projectId: string) {
  const { rows } = await db.execute<MemberGroupRow>(sql`
    select ${groupColumns} from ${memberGroups} g where g.project_id = ${projectId} order by g.name, g.id`);
  return rows.map(presentGroup);
}
