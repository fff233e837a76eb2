// Console sign-in helpers: a user with a password (hashed as the service
// hashes it), and the password sign-in call returning the session cookie.
import pg from 'pg';
import { hashPassword, type ScryptCost } from '../../edge/src/services/console/password.js';
import { seedProject, type TestStack } from './stack.js';

/**
 * A cheap scrypt cost for users of tests that make many attempts: the service
 * reads the cost from the stored hash (and raises it on the next good sign-in).
 */
export const CHEAP_COST: ScryptCost = { N: 1024, r: 8, p: 1 };

/** The origin the stack's Worker answers on: an allowed Origin (the host the request arrived on). */
export const originOf = (stack: TestStack) => new URL(stack.url).origin;

/** A project whose owner has `password`; `cost` defaults to the cheap one. */
export async function consoleUser(stack: TestStack, admin: string, password: string, name = 'console', cost: ScryptCost = CHEAP_COST) {
  const tenant = await seedProject(stack, admin, name);
  await setPassword(stack.sql, tenant.user.id, password, cost);
  return tenant;
}

export async function setPassword(sql: pg.Pool, userId: string, password: string, cost: ScryptCost = CHEAP_COST): Promise<void> {
  await sql.query('UPDATE users SET password_hash = $2 WHERE id = $1', [userId, hashPassword(password, cost)]);
}

/** The `__Host-edgemail_session=<token>` (or, on loopback http, `edgemail_session=`) pair of a Set-Cookie header, for the Cookie header. */
export function cookieOf(setCookie: string | null): string {
  const pair = setCookie?.split(';')[0];
  if (!pair || !/^(__Host-)?edgemail_session=/.test(pair)) throw new Error(`no session cookie in ${setCookie}`);
  return pair;
}

export interface SignInBody { email: string; password: string; totp_code?: string; recovery_code?: string }

/** POST /app/api/session from the service's own origin (as a browser would), from `ip` when given. */
export function signIn(stack: TestStack, body: SignInBody, ip?: string) {
  return stack.call('POST', '/app/api/session', { body, headers: { origin: originOf(stack), ...(ip ? { 'cf-connecting-ip': ip } : {}) } });
}

/** Headers of a request made with the session `cookie` from the service's own origin. */
export const withSession = (stack: TestStack, cookie: string, extra: Record<string, string> = {}) => ({ cookie, origin: originOf(stack), ...extra });

/** The `auth.*` security events of a user (or of an unknown email), oldest first. */
export async function securityEvents(sql: pg.Pool, actorEmail: string): Promise<{ type: string; detail: string | null; status: number; actor_id: string | null; client_ip: string }[]> {
  const { rows } = await sql.query(
    `SELECT type, detail, status, actor_id, client_ip FROM audit_events WHERE category = 'security' AND lower(actor_email) = lower($1) ORDER BY created_at, id`, [actorEmail]);
  return rows;
}
