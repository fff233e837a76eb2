// A membership as the API shows it: the member's account beside the role.
import { sql } from 'drizzle-orm';
import type { MemberRecord } from './types.js';

export type MemberRow = {
  user_id: string; email: string; name: string; role: MemberRecord['role'];
  group_id: string | null; email_verified: boolean; created_at: string | Date;
};

/** The columns of `memberships m join users u`, as MemberRow names them. */
export const memberColumns = sql`u.id as user_id, u.email, u.name, m.role, m.group_id,
  u.email_verified_at is not null as email_verified, m.created_at`;

export const presentMember = (r: MemberRow): MemberRecord => ({
  user_id: r.user_id, email: r.email, name: r.name, role: r.role, group_id: r.group_id,
  email_verified: r.email_verified, created_at: new Date(r.created_at).toISOString(),
});
