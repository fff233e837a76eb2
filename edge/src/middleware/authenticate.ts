// Who is calling: resolves the bearer token or session cookie to a principal,
// or refuses with 401 (bad credential) or 403 (credential not usable here).
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { getCookie } from 'hono/cookie';
import { ipMatcher, parseToken } from '@edgemail/shared';
import { forbidden, unauthorized } from '../http/errors.js';
import { findApiKey, findPlatformCredential, findSession, type CredentialRow } from '../services/auth/find-credential.js';
import { lastUsedUpdate } from '../services/auth/touch-last-used.js';
import { checkCookieOrigin } from './cookie-origin.js';
import { bearerToken } from './bearer.js';
import { projectHeader } from './project-header.js';
import { checkLimit, enforceLimit, type BucketOf, type LimiterName } from './rate-limit.js';
import type { Principal } from './principal.js';
import type { AppEnv } from '../env.js';

export const SESSION_COOKIE = 'edgemail_session';

function usable(row: CredentialRow, label: string, clientIp: string): void {
  if (row.revoked) throw unauthorized(`${label} revoked`);
  if (row.expiresAt && row.expiresAt.getTime() <= Date.now()) throw unauthorized(`${label} expired`);
  if (row.allowedIps.length && !ipMatcher(row.allowedIps)(clientIp)) {
    throw forbidden(`${label} not allowed from address ${clientIp}`);
  }
}

/** The principal, and the last-used write to run once the request is admitted. */
type Resolved = { principal: Principal; touch?: () => Promise<unknown> | null };

/**
 * @param limit a rate limiter counted alongside the credential look-up (the
 *              two round trips overlap); its refusal wins over any other answer
 */
export const authenticate = (limit?: { name: LimiterName; bucketOf: BucketOf }) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const [verdict, resolved] = await Promise.all([
      limit ? checkLimit(c, limit.name, limit.bucketOf) : null,
      resolvePrincipal(c).then((r) => r, (e: unknown) => e as Error),
    ]);
    enforceLimit(verdict);
    if (resolved instanceof Error) throw resolved;
    c.set('principal', resolved.principal);
    const write = resolved.touch?.();
    if (write) c.executionCtx.waitUntil(write);
    await next();
  });

async function resolvePrincipal(c: Context<AppEnv>): Promise<Resolved> {
  const db = c.get('db');
  const authorization = c.req.header('authorization');
  const requestedProject = projectHeader(c);

  if (authorization !== undefined) {
    const token = bearerToken(authorization);
    if (!token) throw unauthorized('malformed Authorization header: expected "Bearer <token>"');
    const parsed = parseToken(token);
    if (!parsed) throw unauthorized('malformed API key');
    if (parsed.kind === 'project') {
      const key = await findApiKey(db, parsed.keyPrefix, token);
      if (!key) throw unauthorized('invalid API key');
      usable(key, 'API key', c.get('clientIp'));
      if (requestedProject && requestedProject !== key.projectId) {
        throw forbidden('X-Service-Project-Id names a different project than the API key\'s');
      }
      return {
        principal: { kind: 'key', id: key.id, name: key.name, projectId: key.projectId, permissions: key.permissions, sandbox: key.sandbox },
        touch: () => lastUsedUpdate(db, 'key', key.id, key.lastUsedAt),
      };
    } else {
      const credential = await findPlatformCredential(db, parsed.keyPrefix, token);
      if (!credential) throw unauthorized('invalid platform credential');
      usable(credential, 'platform credential', c.get('clientIp'));
      return {
        principal: { kind: 'platform', id: credential.id, name: credential.name },
        touch: () => lastUsedUpdate(db, 'platform', credential.id, credential.lastUsedAt),
      };
    }
  }

  const cookie = getCookie(c, SESSION_COOKIE);
  if (!cookie) throw unauthorized('authentication required');
  const session = await findSession(db, cookie, requestedProject);
  if (!session) throw unauthorized('invalid or expired session');
  checkCookieOrigin(c);
  return {
    principal: {
      kind: 'session', id: session.id, userId: session.userId, email: session.email,
      membership: session.projectId && session.role
        ? { projectId: session.projectId, role: session.role, groupPermissions: session.groupPermissions }
        : null,
    },
  };
}

/** The platform administration surface takes a platform credential only. */
export const requirePlatformCredential = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    if (c.get('principal').kind !== 'platform') throw forbidden('admin privileges required');
    await next();
  });
