// The stream's re-check of the sessions it serves: which are still live and
// still belong to a member of the project. The same rule as the sign-in
// look-up (services/auth/find-credential.ts): before the absolute expiry, used
// within the idle period, opened after the user's last "sign out everywhere";
// a deleted row (sign-out) is simply not found. A project that comes to
// require single sign-on keeps only the streams of sessions opened through it.
import { sql } from 'drizzle-orm';
import { memberships, projects, sessions, users } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

/** Of `sessionIds`, those still live for `projectId` (one query for every open stream of the project). */
export async function liveSessions(db: Db, projectId: string, sessionIds: string[], idleMs: number): Promise<Set<string>> {
  if (!sessionIds.length) return new Set();
  const { rows } = await db.execute<{ id: string }>(sql`
    select s.id from ${sessions} s
    join ${users} u on u.id = s.user_id
    join ${memberships} m on m.user_id = s.user_id and m.project_id = ${projectId}
    join ${projects} p on p.id = m.project_id
    where s.id = any(${`{${sessionIds.join(',')}}`}::uuid[])
      and s.expires_at > now()
      and s.last_seen_at > now() - make_interval(secs => ${idleMs / 1000}::double precision)
      and s.created_at > coalesce(u.sessions_valid_after, '-infinity'::timestamptz)
      and (not p.sso_required or s.method = 'oidc')`);
  return new Set(rows.map((r) => r.id));
}
