// Removing a member, or a member leaving. The last owner never goes: the
// count and the delete run behind the project's `members` lock.
import { sql } from 'drizzle-orm';
import { memberships } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { projectLock } from '../../db/project-lock.js';
import { conflict, notFound } from '../errors.js';
import { ownershipRefused } from './ownership.js';
import { reassignDefaultProject } from './default-project.js';
import type { PeopleActor } from './types.js';

type Outcome = { old_role: string | null; owners: number; removed: boolean };

/** Removes `userId` from the project; `actor.owner` is needed to remove an owner (a member leaving passes it for themselves). */
export async function removeMember(db: Db, projectId: string, userId: string, actor: PeopleActor): Promise<void> {
  const statement = sql`
    with target as (select m.id, m.role from ${memberships} m where m.project_id = ${projectId} and m.user_id = ${userId}),
    owners as (select count(*)::int as n from ${memberships} where project_id = ${projectId} and role = 'owner'),
    removed as (
      delete from ${memberships} m using target t, owners o
      where m.id = t.id and (${actor.owner} or t.role <> 'owner') and not (t.role = 'owner' and o.n <= 1)
      returning m.id
    )
    select (select role from target)::text as old_role, (select n from owners) as owners, exists (select 1 from removed) as removed`;
  const [, result] = await db.batch([
    db.execute(projectLock('members', projectId)),
    db.execute<Outcome>(statement),
    // Reads the snapshot after the delete (READ COMMITTED, a statement of its own): the membership is gone.
    db.execute(reassignDefaultProject(userId, projectId)),
  ]);
  const row = result.rows[0]!;
  if (row.removed) return;
  if (row.old_role === null) throw notFound('member not found');
  if (!actor.owner) throw ownershipRefused(actor, 'project owner role required to remove an owner');
  throw conflict('the last owner of a project cannot leave or be removed: make another member owner first');
}
