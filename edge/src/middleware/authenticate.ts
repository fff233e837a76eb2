// Who is calling: resolves the bearer token or session cookie to a principal,
// or refuses with 401 (bad credential) or 403 (credential not usable here).
// The API rate limit is counted here too: for a project API key in the same
// Durable Object call that reads the key (api-key-admission.ts); for anything
// else alongside the credential look-up, so the two round trips overlap.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { getCookie } from 'hono/cookie';
import { ipMatcher, parseToken, sha256Hex, type WindowVerdict } from '@edgemail/shared';
import { ApiError, forbidden, unauthorized } from '../http/errors.js';
import { findApiKey, findPlatformCredential, findSession, type CredentialRow } from '../services/auth/find-credential.js';
import { lastUsedUpdate } from '../services/auth/touch-last-used.js';
import { sessionCookieName, touchSession } from '../services/console/sessions.js';
import { checkCookieOrigin } from './cookie-origin.js';
import { bearerToken } from './bearer.js';
import { projectHeader } from './project-header.js';
import { addressBucketOf, checkLimit, credentialBucket, enforceLimit, type LimiterName } from './rate-limit.js';
import { admitApiKey } from './api-key-admission.js';
import type { Principal } from './principal.js';
import type { ApiKeyRow } from '../services/auth/find-credential.js';
import type { AppEnv } from '../env.js';

/** Refuses a credential that was found but may not be used now or from here. */
function assertUsable(row: CredentialRow, label: string, clientIp: string): void {
  if (row.revoked) throw unauthorized(`${label} revoked`);
  if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) throw unauthorized(`${label} expired`);
  if (row.allowedIps.length && !ipMatcher(row.allowedIps)(clientIp)) {
    throw forbidden(`${label} not allowed from address ${clientIp}`);
  }
}

/** What the request presents, read once for the look-up and the limiter alike. */
type Presented =
  | { kind: 'token'; token: string; hash: string }
  | { kind: 'malformed'; message: string }
  | { kind: 'cookie'; value: string }
  | { kind: 'none' };

async function presented(c: Context<AppEnv>): Promise<Presented> {
  const authorization = c.req.header('authorization');
  if (authorization !== undefined) {
    const token = bearerToken(authorization);
    if (!token) return { kind: 'malformed', message: 'malformed Authorization header: expected "Bearer <token>"' };
    if (!parseToken(token)) return { kind: 'malformed', message: 'malformed API key' };
    return { kind: 'token', token, hash: await sha256Hex(token) };
  }
  // Only the name this deployment sets: on a Secure site a plain `edgemail_session`, which a sibling
  // subdomain could have planted, is not read at all.
  const cookie = getCookie(c, sessionCookieName(c.get('config')));
  return cookie ? { kind: 'cookie', value: cookie } : { kind: 'none' };
}

/** The principal, and the last-used write to run once the request is admitted. */
type Resolved = { principal: Principal; touch?: () => Promise<unknown> | null };

/**
 * @param limiter counted per presented token (by its hash), else per client
 *                address; a token that proves nothing is counted against the
 *                address as well, so a flood of made-up tokens meets the limit
 */
export const authenticate = (limiter?: LimiterName) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const credential = await presented(c);
    const [verdict, resolved] = await limitAndResolve(c, credential, limiter);
    enforceLimit(verdict);
    if (resolved instanceof Error) {
      const unproven = credential.kind === 'token' && resolved instanceof ApiError && resolved.status === 401;
      if (limiter && unproven) enforceLimit(await checkLimit(c, limiter, addressBucketOf(c)));
      throw resolved;
    }
    c.set('principal', resolved.principal);
    const write = resolved.touch?.();
    if (write) c.executionCtx.waitUntil(write);
    await next();
  });

/** The limiter's verdict (null: not counted) and the principal, or the error refusing it. */
async function limitAndResolve(c: Context<AppEnv>, credential: Presented, limiter: LimiterName | undefined): Promise<[WindowVerdict | null, Resolved | Error]> {
  const settle = (resolving: () => Promise<Resolved>) => resolving().then((r) => r, (e: unknown) => e as Error);
  if (credential.kind === 'token') {
    const { kind, keyPrefix } = parseToken(credential.token)!;
    if (kind === 'project') {
      const admission = await admitApiKey(c, limiter, keyPrefix, credential.hash);
      if (admission) return [admission.verdict, await settle(async () => apiKeyPrincipal(c, admission.key))];
    }
  }
  const bucket = credential.kind === 'token' ? credentialBucket(credential.hash) : addressBucketOf(c);
  return Promise.all([limiter ? checkLimit(c, limiter, bucket) : null, settle(() => resolvePrincipal(c, credential))]);
}

/** A project API key's principal, from its row (null: no key holds the token). */
function apiKeyPrincipal(c: Context<AppEnv>, key: ApiKeyRow | null): Resolved {
  const requestedProject = projectHeader(c);
  if (!key) throw unauthorized('invalid API key');
  assertUsable(key, 'API key', c.get('clientIp'));
  if (requestedProject && requestedProject !== key.projectId) {
    throw forbidden('X-Service-Project-Id names a different project than the API key\'s');
  }
  const db = c.get('db');
  return {
    principal: { kind: 'key', id: key.id, name: key.name, projectId: key.projectId, permissions: key.permissions, sandbox: key.sandbox },
    touch: () => lastUsedUpdate(db, 'key', key.id, key.lastUsedAt),
  };
}

async function resolvePrincipal(c: Context<AppEnv>, credential: Presented): Promise<Resolved> {
  const db = c.get('db');
  const requestedProject = projectHeader(c);

  switch (credential.kind) {
    case 'malformed':
      throw unauthorized(credential.message);
    case 'none':
      throw unauthorized('authentication required');
    case 'token': {
      const { kind, keyPrefix } = parseToken(credential.token)!;
      // Not looked up: a node credential is good for /relay/v1 only (docs/relay-protocol.md).
      if (kind === 'relay') throw forbidden('relay node credentials are accepted on /relay/v1 only');
      // Reached only when the key's ApiKeyGate failed (limitAndResolve).
      if (kind === 'project') return apiKeyPrincipal(c, await findApiKey(db, keyPrefix, credential.hash));
      const platform = await findPlatformCredential(db, keyPrefix, credential.hash);
      if (!platform) throw unauthorized('invalid platform credential');
      assertUsable(platform, 'platform credential', c.get('clientIp'));
      return {
        principal: { kind: 'platform', id: platform.id, name: platform.name },
        touch: () => lastUsedUpdate(db, 'platform', platform.id, platform.lastUsedAt),
      };
    }
    case 'cookie': {
      const session = await findSession(db, credential.value, requestedProject, c.get('config')['console.session_idle_timeout']);
      if (!session) throw unauthorized('invalid or expired session');
      checkCookieOrigin(c);
      return {
        touch: () => touchSession(db, session.id, session.lastSeenAt),
        principal: {
          kind: 'session', id: session.id, userId: session.userId, email: session.email, method: session.method, signedInAt: session.signedInAt,
          identityProviderId: session.identityProviderId, platformAdmin: session.platformAdmin,
          membership: session.projectId && session.role
            ? { projectId: session.projectId, role: session.role, groupPermissions: session.groupPermissions, ssoRequired: session.ssoRequired, ssoAccepted: session.ssoAccepted }
            : null,
        },
      };
    }
  }
}

/**
 * The platform administration surface: a platform credential, or a console
 * session of a user who is a platform admin (`users.platform_admin`, read with
 * the session on this very request, so a revocation holds on the next one;
 * the session's Origin rule was applied when it was resolved). A project key
 * never. The one admin gate, mounted on the whole `/api/v1/admin/*` path
 * (`defineRoute` refuses a `platform:admin` route outside it).
 */
export const requirePlatformCredential = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    const principal = c.get('principal');
    const admitted = principal.kind === 'platform' || (principal.kind === 'session' && principal.platformAdmin);
    if (!admitted) throw forbidden('admin privileges required');
    await next();
  });
