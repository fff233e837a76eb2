// The stream's re-check of the sessions it serves: which are still live and
// still belong to a member of the project, and with which role and group now.
// The same rule as the sign-in look-up (services/auth/find-credential.ts):
// before the absolute expiry, used within the idle period, opened after the
// user's last "sign out everywhere"; a deleted row (sign-out) is simply not
// found. A project that comes to require single sign-on keeps only the streams
// of sessions opened through a provider it names, and a session whose provider
// is disabled ends (services/console/sso-rule.ts).
import { sql } from 'drizzle-orm';
import { identityProviders, memberGroups, memberships, projects, sessions, users } from '@edgemail/schema';
import type { Role } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { ssoAllowsSql } from '../console/sso-rule.js';

/** A live session's membership as it is now: what `visibleEventNames` reads. */
export interface LiveMembership { role: Role; groupPermissions: string[] | null }

/**
 * Of `sessionIds`, those still live for `projectId`, each with its member's
 * current role and group permissions (one query for every open stream of the
 * project). A member in a group holds the group's list, as in find-credential.ts.
 */
export async function liveSessions(db: Db, projectId: string, sessionIds: string[], idleMs: number): Promise<Map<string, LiveMembership>> {
  if (!sessionIds.length) return new Map();
  const { rows } = await db.execute<{ id: string; role: Role; group_permissions: string[] | null }>(sql`
    select s.id, m.role,
      case when m.group_id is null then null else coalesce(g.permissions, '{}'::text[]) end as group_permissions
    from ${sessions} s
    join ${users} u on u.id = s.user_id
    join ${memberships} m on m.user_id = s.user_id and m.project_id = ${projectId}
    join ${projects} p on p.id = m.project_id
    left join ${memberGroups} g on g.id = m.group_id and g.project_id = m.project_id
    where s.id = any(${`{${sessionIds.join(',')}}`}::uuid[])
      and s.expires_at > now()
      and s.last_seen_at > now() - make_interval(secs => ${idleMs / 1000}::double precision)
      and s.created_at > coalesce(u.sessions_valid_after, '-infinity'::timestamptz)
      and (s.identity_provider_id is null or exists (select 1 from ${identityProviders} ip where ip.id = s.identity_provider_id and ip.enabled))
      and ${ssoAllowsSql(sql.raw('p'), sql.raw('s'))}`);
  return new Map(rows.map((r) => [r.id, { role: r.role, groupPermissions: r.group_permissions }]));
}
