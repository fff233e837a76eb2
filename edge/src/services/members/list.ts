import { sql } from 'drizzle-orm';
import { memberships, users } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { memberColumns, presentMember, type MemberRow } from './present.js';

/** Every member of the project, oldest membership first. */
export async function listMembers(db: Db, projectId: string) {
  const { rows } = await db.execute<MemberRow>(sql`
    select ${memberColumns} from ${memberships} m join ${users} u on u.id = m.user_id
    where m.project_id = ${projectId} order by m.created_at, u.id`);
  return rows.map(presentMember);
}
