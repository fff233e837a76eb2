// Console browser sessions: an opaque random token in the
// `__Host-edgemail_session` cookie (`edgemail_session` on loopback http);
// only hex(sha256(token)) is stored (find-credential.ts looks it up).
// Two expiries: absolute (`expires_at`, fixed at sign-in) and idle
// (`last_seen_at` + `console.session_idle_timeout`, moved by requests at most
// once a minute); `users.sessions_valid_after` voids every older session.
import { and, eq, lt, sql } from 'drizzle-orm';
import { sessions } from '@edgemail/schema';
import { base64url, isIp, sha256Hex, type Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { loggableError } from '../../db/errors.js';

/**
 * The cookie's name wherever it is `Secure`: browsers take a `__Host-` cookie
 * only when it is Secure, has Path=/ and no Domain, so a sibling subdomain
 * cannot plant (or overwrite) a session here with a Domain cookie.
 */
export const SECURE_SESSION_COOKIE = '__Host-edgemail_session';
/** Its name on plain http on a loopback host (`pnpm dev`), where `__Host-` cannot be had (it needs Secure). */
export const PLAIN_SESSION_COOKIE = 'edgemail_session';

/** The one name this deployment sets and reads: a plain-named cookie on a Secure site is never a session. */
export function sessionCookieName(config: Pick<Config, 'server.public_url'>): string {
  return isSecureCookieSite(config) ? SECURE_SESSION_COOKIE : PLAIN_SESSION_COOKIE;
}

export type SessionMethod = 'password' | 'passkey' | 'oidc';

export interface OpenSession {
  userId: string;
  method: SessionMethod;
  /** The identity provider of an `oidc` session: the session ends when that provider is disabled or deleted. */
  identityProviderId?: string | null;
  clientIp: string | null;
  userAgent: string | null;
  /** The project the console starts in; null: the user's default project. */
  currentProjectId?: string | null;
  /** The settings: `console.session_max_age` and `server.public_url` (c.get('config')). */
  config: Config;
}

export interface OpenedSession {
  id: string;
  token: string;
  expiresAt: Date;
  /** The `Set-Cookie` header value carrying the token. */
  setCookie: string;
}

/** `Secure` is left off only for plain http on a loopback host (`pnpm dev`), where browsers would drop it. */
export function isSecureCookieSite(config: Pick<Config, 'server.public_url'>): boolean {
  const url = new URL(config['server.public_url']);
  if (url.protocol === 'https:') return true;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host.endsWith('.localhost') || host === '::1'
    || (isIp(host) && host.startsWith('127.'));
  return !loopback;
}

function cookie(config: Config, value: string, maxAgeSeconds: number): string {
  // No Domain attribute, ever: a `__Host-` cookie with one is dropped by the browser.
  const attributes = [`${sessionCookieName(config)}=${value}`, 'Path=/', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict'];
  if (isSecureCookieSite(config)) attributes.push('Secure');
  return attributes.join('; ');
}

/** The `Set-Cookie` value that removes the session cookie (sign-out). */
export function clearedSessionCookie(config: Config): string {
  return cookie(config, '', 0);
}

/** Opens a session for a user who has just proven who they are; the caller sends `setCookie`. */
export async function openSession(db: Db, o: OpenSession): Promise<OpenedSession> {
  const token = base64url(crypto.getRandomValues(new Uint8Array(32)));
  const maxAgeMs = o.config['console.session_max_age'];
  const [row] = await db.insert(sessions).values({
    userId: o.userId,
    tokenHash: await sha256Hex(token),
    expiresAt: sql`now() + make_interval(secs => ${maxAgeMs / 1000})`,
    method: o.method,
    identityProviderId: o.identityProviderId ?? null,
    currentProjectId: o.currentProjectId ?? null,
    clientIp: o.clientIp,
    userAgent: o.userAgent?.slice(0, 512) ?? null,
  }).returning({ id: sessions.id, expiresAt: sessions.expiresAt });
  return { id: row!.id, token, expiresAt: row!.expiresAt, setCookie: cookie(o.config, token, Math.floor(maxAgeMs / 1000)) };
}

/** Ends one session (sign-out). */
export async function closeSession(db: Db, sessionId: string): Promise<void> {
  await db.delete(sessions).where(eq(sessions.id, sessionId));
}

/**
 * Ends every session of the user (sign-out everywhere): `sessions_valid_after`
 * voids each one opened before now, and their rows go in the same statement.
 */
export async function closeAllSessions(db: Db, userId: string): Promise<void> {
  await db.execute(sql`
    WITH bumped AS (UPDATE users SET sessions_valid_after = now() WHERE id = ${userId} RETURNING id)
    DELETE FROM sessions WHERE user_id IN (SELECT id FROM bumped) AND created_at <= now()`);
}


const TOUCH_INTERVAL_MS = 60_000;

/**
 * Moves the idle expiry forward: the write to run after the response (null:
 * none due, at most one a minute; the SQL guard keeps it so across isolates).
 */
export function touchSession(db: Db, sessionId: string, lastSeenAt: Date, now = Date.now()): Promise<unknown> | null {
  if (now - lastSeenAt.getTime() < TOUCH_INTERVAL_MS) return null;
  return db.update(sessions).set({ lastSeenAt: sql`now()` })
    .where(and(eq(sessions.id, sessionId), lt(sessions.lastSeenAt, sql`now() - interval '1 minute'`)))
    .then(() => undefined, (e: unknown) => console.error('session touch failed', loggableError(e)));
}
