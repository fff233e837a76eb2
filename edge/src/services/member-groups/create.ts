import { sql } from 'drizzle-orm';
import { memberGroups } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { conflict } from '../errors.js';
import type { CreateMemberGroupInput } from '../../contracts/member.js';
import { presentGroup, textArray, type MemberGroupRow } from './present.js';

/** The list was checked by the contract (no `*`, catalogue entries only); the table's CHECK is the last guard. */
export async function createMemberGroup(db: Db, projectId: string, input: CreateMemberGroupInput) {
  try {
    const { rows } = await db.execute<MemberGroupRow>(sql`
      with g as (
        insert into ${memberGroups} (project_id, name, permissions)
        values (${projectId}, ${input.name}, ${textArray(input.permissions)}::text[])
        returning *
      )
      select g.id, g.project_id, g.name, g.permissions, g.created_at, 0 as members from g`);
    return presentGroup(rows[0]!);
  } catch (e) {
    if (isUniqueViolation(e)) throw conflict(`a member group named ${input.name} already exists in this project`);
    throw e;
  }
}
