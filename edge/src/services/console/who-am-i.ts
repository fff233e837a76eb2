// What the console shows of the signed-in user: the account, the session and
// every membership. Also switching the session's current project.
import { and, asc, eq, sql } from 'drizzle-orm';
import { memberships, projects, sessions, users } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { forbidden, notFound } from '../errors.js';
import { SSO_REQUIRED, ssoAllowsSql } from './sso-rule.js';

/** The user and session as the sign-in and who-am-i answers present them. */
export async function presentSignedIn(db: Db, config: Config, sessionId: string) {
  const [row] = await db.select({
    id: users.id, email: users.email, name: users.name, emailVerifiedAt: users.emailVerifiedAt,
    totpEnabledAt: users.totpEnabledAt, defaultProjectId: users.defaultProjectId, platformAdmin: users.platformAdmin,
    sessionId: sessions.id, method: sessions.method, createdAt: sessions.createdAt, expiresAt: sessions.expiresAt,
    lastSeenAt: sessions.lastSeenAt,
    currentProjectId: sql<string | null>`coalesce(${sessions.currentProjectId}, ${users.defaultProjectId})`,
  }).from(sessions).innerJoin(users, eq(users.id, sessions.userId)).where(eq(sessions.id, sessionId));
  if (!row) throw notFound('session not found');
  const idleMs = config['console.session_idle_timeout'];
  return {
    user: {
      id: row.id, email: row.email, name: row.name, email_verified: row.emailVerifiedAt !== null,
      two_factor_enabled: row.totpEnabledAt !== null, default_project_id: row.defaultProjectId, platform_admin: row.platformAdmin,
    },
    session: {
      id: row.sessionId, method: row.method as 'password' | 'passkey' | 'oidc', created_at: row.createdAt.toISOString(),
      expires_at: row.expiresAt.toISOString(),
      idle_expires_at: new Date(Math.min(row.lastSeenAt.getTime() + idleMs, row.expiresAt.getTime())).toISOString(),
      current_project_id: row.currentProjectId,
    },
  };
}

/** The who-am-i answer (`GET /app/api/session`, and the routes that change what it shows). */
export async function whoAmI(db: Db, config: Config, session: { id: string; userId: string }) {
  const [signedIn, memberships] = await Promise.all([presentSignedIn(db, config, session.id), listMemberships(db, session.userId)]);
  return { ...signedIn, memberships };
}

export async function listMemberships(db: Db, userId: string) {
  const rows = await db.select({ projectId: memberships.projectId, projectName: projects.name, role: memberships.role, groupId: memberships.groupId, ssoRequired: projects.ssoRequired })
    .from(memberships).innerJoin(projects, eq(projects.id, memberships.projectId))
    .where(eq(memberships.userId, userId)).orderBy(asc(projects.name), asc(projects.id));
  return rows.map((r) => ({ project_id: r.projectId, project_name: r.projectName, role: r.role, group_id: r.groupId, sso_required: r.ssoRequired }));
}

/** Switches the session's current project; refused (403) for a project the user is not a member of, existing or not. */
export async function switchProject(db: Db, sessionId: string, userId: string, projectId: string): Promise<void> {
  const updated = await db.update(sessions).set({ currentProjectId: projectId })
    .where(and(
      eq(sessions.id, sessionId),
      sql`EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = ${userId} AND m.project_id = ${projectId})`,
      sql`NOT EXISTS (SELECT 1 FROM projects p WHERE p.id = ${projectId} AND NOT ${ssoAllowsSql(sql.raw('p'), sql.raw('sessions'))})`,
    ))
    .returning({ id: sessions.id });
  if (updated.length) return;
  // Refused: say whether for the membership or for the project's SSO policy.
  const [member] = await db.select({ id: memberships.id }).from(memberships)
    .where(and(eq(memberships.userId, userId), eq(memberships.projectId, projectId)));
  throw forbidden(member ? SSO_REQUIRED : 'not a member of this project');
}

/** The project the user's sessions fall back to (and a new session starts in); only a project they are a member of. */
export async function setDefaultProject(db: Db, userId: string, projectId: string): Promise<void> {
  const updated = await db.update(users).set({ defaultProjectId: projectId })
    .where(and(eq(users.id, userId), sql`EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = ${userId} AND m.project_id = ${projectId})`))
    .returning({ id: users.id });
  if (!updated.length) throw forbidden('not a member of this project');
}
