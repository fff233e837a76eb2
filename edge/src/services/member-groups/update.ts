import { sql } from 'drizzle-orm';
import { memberGroups, memberships } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict, notFound } from '../errors.js';
import type { UpdateMemberGroupInput } from '../../contracts/member.js';
import { presentGroup, textArray, type MemberGroupRow } from './present.js';

/** Renames the group or replaces its list; its members hold the new list from their next request. */
export async function updateMemberGroup(db: Db, projectId: string, id: string, input: UpdateMemberGroupInput) {
  const permissions = input.permissions ? textArray(input.permissions) : null;
  try {
    const { rows } = await db.execute<MemberGroupRow>(sql`
      with g as (
        update ${memberGroups} set name = coalesce(${input.name ?? null}, name), permissions = coalesce(${permissions}::text[], permissions)
        where id = ${id} and project_id = ${projectId}
        returning *
      )
      select g.id, g.project_id, g.name, g.permissions, g.created_at,
        (select count(*)::int from ${memberships} m where m.group_id = g.id) as members
      from g`);
    if (!rows[0]) throw notFound('member group not found');
    return presentGroup(rows[0]);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`a member group named ${input.name} already exists in this project`);
    throw e;
  }
}
