import { sql } from 'drizzle-orm';
import { memberships } from '@edgemail/schema';
import type { z } from '@hono/zod-openapi';
import type { MemberGroupSchema } from '../../contracts/member.js';

export type MemberGroupRecord = z.infer<typeof MemberGroupSchema>;
export type MemberGroupRow = { id: string; project_id: string; name: string; permissions: string[]; members: number; created_at: string | Date };

/** The columns of `member_groups g`, with the count of its members. */
export const groupColumns = sql`g.id, g.project_id, g.name, g.permissions, g.created_at,
  (select count(*)::int from ${memberships} m where m.group_id = g.id) as members`;

export const presentGroup = (r: MemberGroupRow): MemberGroupRecord => ({
  id: r.id, project_id: r.project_id, name: r.name, permissions: r.permissions, members: r.members,
  created_at: new Date(r.created_at).toISOString(),
});

/** A permission list as a PostgreSQL array literal (catalogue entries: no character needs quoting). */
export const textArray = (list: readonly string[]) => `{${list.join(',')}}`;
