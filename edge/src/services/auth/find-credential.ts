// Credential look-ups: one round trip each, by the token's public prefix; the
// stored hash is then compared with the presented token's in constant time, so
// timing tells nothing of it. These run on every request, so their queries are
// prepared.
import { and, eq, gt, sql } from 'drizzle-orm';
import { apiKeys, identityProviders, memberGroups, memberships, platformCredentials, projects, sessions, users } from '@edgemail/schema';
import { constantTimeEqual, sha256Hex, type Role } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { prepared } from '../../db/prepared.js';

export interface CredentialRow {
  id: string;
  name: string;
  allowedIps: string[];
  expiresAt: Date | null;
  revoked: boolean;
  lastUsedAt: Date | null;
}
export interface ApiKeyRow extends CredentialRow { projectId: string; permissions: string[]; sandbox: boolean }

function matches<T extends { keyHash: string }>(row: T | undefined, tokenHash: string): T | null {
  return row && constantTimeEqual(row.keyHash, tokenHash) ? row : null;
}

const apiKeyByPrefix = prepared((db) => db
  .select({
    id: apiKeys.id, name: apiKeys.name, projectId: apiKeys.projectId, keyHash: apiKeys.keyHash,
    permissions: apiKeys.permissions, allowedIps: apiKeys.allowedIps, expiresAt: apiKeys.expiresAt,
    revoked: apiKeys.revoked, sandbox: apiKeys.sandbox, lastUsedAt: apiKeys.lastUsedAt,
  })
  .from(apiKeys)
  .where(eq(apiKeys.keyPrefix, sql.placeholder('keyPrefix')))
  .prepare('api_key_by_prefix'));

/** @param tokenHash hex(sha256) of the whole presented token */
export async function findApiKey(db: Db, keyPrefix: string, tokenHash: string): Promise<ApiKeyRow | null> {
  const [row] = await apiKeyByPrefix(db).execute({ keyPrefix });
  return matches(row, tokenHash);
}

const platformCredentialByPrefix = prepared((db) => db
  .select({
    id: platformCredentials.id, name: platformCredentials.name, keyHash: platformCredentials.keyHash,
    allowedIps: platformCredentials.allowedIps, expiresAt: platformCredentials.expiresAt,
    revoked: platformCredentials.revoked, lastUsedAt: platformCredentials.lastUsedAt,
  })
  .from(platformCredentials)
  .where(eq(platformCredentials.keyPrefix, sql.placeholder('keyPrefix')))
  .prepare('platform_credential_by_prefix'));

/** @param tokenHash hex(sha256) of the whole presented token */
export async function findPlatformCredential(db: Db, keyPrefix: string, tokenHash: string): Promise<CredentialRow | null> {
  const [row] = await platformCredentialByPrefix(db).execute({ keyPrefix });
  return matches(row, tokenHash);
}

export interface SessionRow {
  id: string;
  userId: string;
  email: string;
  /** The project asked for, else the session's current project, else the user's default; null when none. */
  projectId: string | null;
  role: Role | null;
  groupPermissions: string[] | null;
  /** How the session was opened: `password`, `passkey` or `oidc`. */
  method: string;
  /** When it was opened: the sign-in that a recent-sign-in check (services/console/recent-sign-in.ts) reads. */
  signedInAt: Date;
  /** The identity provider the session was opened through (null: not through one). */
  identityProviderId: string | null;
  /** The resolved project's SSO policy (false when not a member). */
  ssoRequired: boolean;
  /** The session's provider is one the resolved project's SSO policy names (services/console/sso-rule.ts). */
  ssoAccepted: boolean;
  /** For the idle expiry's touch (services/console/sessions.ts), at most once a minute. */
  lastSeenAt: Date;
  /** `users.platform_admin`, read with the session on every request: a revocation holds on the next one. */
  platformAdmin: boolean;
}

// The project asked for in the header, else the session's current project, else the user's default.
const sessionProject = sql`coalesce(${sql.placeholder('projectId')}::uuid, ${sessions.currentProjectId}, ${users.defaultProjectId})`;

// Live: before its absolute expiry, used within the idle period, opened
// after the user's last "sign out everywhere", and, when opened through an
// identity provider, that provider still enabled (deleting it deletes the
// session: the foreign key cascades).
const sessionLive = and(
  gt(sessions.expiresAt, sql`now()`),
  gt(sessions.lastSeenAt, sql`now() - make_interval(secs => ${sql.placeholder('idleSeconds')}::double precision)`),
  sql`${sessions.createdAt} > coalesce(${users.sessionsValidAfter}, '-infinity'::timestamptz)`,
  sql`(${sessions.identityProviderId} is null or ${identityProviders.enabled})`,
);

const sessionByTokenHash = prepared((db) => db
  .select({
    id: sessions.id, userId: users.id, email: users.email,
    projectId: sql<string | null>`${sessionProject}`,
    role: memberships.role,
    // A member of a group holds the group's list; a group of another project (which
    // the schema forbids too) grants nothing rather than falling back to the role.
    groupPermissions: sql<string[] | null>`case when ${memberships.groupId} is null then null else coalesce(${memberGroups.permissions}, '{}'::text[]) end`,
    method: sessions.method,
    signedInAt: sessions.createdAt,
    identityProviderId: sessions.identityProviderId,
    ssoRequired: sql<boolean>`coalesce(${projects.ssoRequired}, false)`,
    ssoAccepted: sql<boolean>`coalesce(${sessions.identityProviderId} = any(${projects.ssoProviderIds}), false)`,
    lastSeenAt: sessions.lastSeenAt,
    platformAdmin: users.platformAdmin,
  })
  .from(sessions)
  .innerJoin(users, eq(users.id, sessions.userId))
  .leftJoin(identityProviders, eq(identityProviders.id, sessions.identityProviderId))
  .leftJoin(memberships, and(eq(memberships.userId, users.id), sql`${memberships.projectId} = ${sessionProject}`))
  .leftJoin(memberGroups, and(eq(memberGroups.id, memberships.groupId), eq(memberGroups.projectId, memberships.projectId)))
  .leftJoin(projects, eq(projects.id, memberships.projectId))
  .where(and(eq(sessions.tokenHash, sql.placeholder('tokenHash')), sessionLive))
  .prepare('session_by_token_hash'));

/**
 * Finds a live session and, in the same query, the user's membership in the
 * requested project (else the session's current project, else the default).
 * @param idleMs `console.session_idle_timeout`
 */
export async function findSession(db: Db, token: string, requestedProjectId: string | null, idleMs: number): Promise<SessionRow | null> {
  const [row] = await sessionByTokenHash(db).execute({ tokenHash: await sha256Hex(token), projectId: requestedProjectId, idleSeconds: idleMs / 1000 });
  return row ?? null;
}
