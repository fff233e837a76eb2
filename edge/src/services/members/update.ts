// Changing a member's role or group. The last owner is never demoted: the
// count and the change run behind the project's `members` lock, so two
// demotions at once cannot both pass it.
import { sql } from 'drizzle-orm';
import { memberGroups, memberships, users } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { projectLock } from '../../db/project-lock.js';
import { conflict, invalid, notFound } from '../errors.js';
import { ownershipRefused } from './ownership.js';
import type { UpdateMemberInput } from '../../contracts/member.js';
import { memberColumns, presentMember, type MemberRow } from './present.js';
import type { PeopleActor } from './types.js';

type Outcome = MemberRow & { old_role: string | null; owners: number; group_ok: boolean; updated: boolean };

export async function updateMember(db: Db, projectId: string, userId: string, input: UpdateMemberInput, actor: PeopleActor) {
  const role = input.role ?? null;
  const setGroup = input.group_id !== undefined;
  const groupId = input.group_id ?? null;
  // One statement behind the lock: it reads the member, the owner count and the group, and changes the row only when all allow.
  const statement = sql`
    with target as (select m.id, m.role from ${memberships} m where m.project_id = ${projectId} and m.user_id = ${userId}),
    owners as (select count(*)::int as n from ${memberships} where project_id = ${projectId} and role = 'owner'),
    grp as (select (${groupId}::uuid is null or exists (select 1 from ${memberGroups} g where g.id = ${groupId}::uuid and g.project_id = ${projectId})) as ok),
    allowed as (
      select t.id from target t, owners o, grp
      where grp.ok
        and (${actor.owner} or (t.role <> 'owner' and coalesce(${role}::member_role, t.role) <> 'owner'))
        and not (t.role = 'owner' and coalesce(${role}::member_role, 'owner') <> 'owner' and o.n <= 1)
    ),
    changed as (
      update ${memberships} m set role = coalesce(${role}::member_role, m.role),
        group_id = case when ${setGroup} then ${groupId}::uuid else m.group_id end
      from allowed a where m.id = a.id
      returning m.*
    )
    select (select role from target)::text as old_role, (select n from owners) as owners, (select ok from grp) as group_ok,
      exists (select 1 from changed) as updated,
      ${memberColumns}
    from (select * from changed union all select m.* from ${memberships} m where m.id = (select id from target) and not exists (select 1 from changed)) m
    join ${users} u on u.id = m.user_id`;
  const [, result] = await db.batch([db.execute(projectLock('members', projectId)), db.execute<Outcome>(statement)]);
  const row = result.rows[0];
  if (!row) throw notFound('member not found');
  if (row.updated) return presentMember(row);
  if (!row.group_ok) throw invalid('group_id: no such member group in this project', { group_id: 'no such member group in this project' });
  if (!actor.owner) throw ownershipRefused(actor, 'project owner role required to change an owner or grant the owner role');
  throw conflict('the last owner of a project cannot be demoted: make another member owner first');
}
