// The password sign-in lockout (spec "Other constants"): ten consecutive
// failed sign-ins lock password sign-in for fifteen minutes from every
// address, exactly, however many arrive at once; during it every answer is
// the invalid-credentials one, a right password included; a right password
// outside a lockout clears the count. And ratelimit.login_per_minute per
// client address. Each attempt comes from its own address unless the test
// is about one address, so the lockout is never the limiter's doing.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, startTestStack, type TestStack } from './support/stack.js';
import { consoleUser, securityEvents, setPassword, signIn } from './support/console.js';
import { awayFromWindowEdge } from './support/wait.js';

const PASSWORD = 'correct horse battery staple';
const INVALID = { error: 'invalid email or password' };
const LOGIN_PER_MINUTE = 5;

let stack: TestStack;
let admin: string;
let addresses = 0;
/** A client address no other attempt of this file used (TEST-NET-3, then TEST-NET-2). */
const freshAddress = () => { addresses++; return `${addresses <= 250 ? '203.0.113' : '198.51.100'}.${(addresses % 250) + 1}`; };

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: String(LOGIN_PER_MINUTE) } });
  admin = await platformToken(stack);
});
afterAll(async () => { await stack?.stop(); });

const lockState = async (userId: string) => (await stack.sql.query(
  `SELECT failed_password_count AS count, password_locked_until AS until,
          password_locked_until > now() + interval '14 minutes 50 seconds' AND password_locked_until <= now() + interval '15 minutes' AS fifteen
   FROM users WHERE id = $1`, [userId])).rows[0];
const sessions = async (userId: string) => Number((await stack.sql.query('SELECT count(*) FROM sessions WHERE user_id = $1', [userId])).rows[0].count);
async function wrong(email: string, n: number) {
  const replies = await Promise.all(Array.from({ length: n }, (_, i) => signIn(stack, { email, password: `wrong ${i}` }, freshAddress())));
  for (const r of replies) expect(r.body).toEqual(INVALID);
  return replies;
}

describe('the lockout', () => {
  test('25 wrong passwords at once from 25 addresses: exactly ten count, the tenth locks for 15 minutes, the rest are "locked"', async () => {
    const { user } = await consoleUser(stack, admin, PASSWORD, 'flood');
    const replies = await wrong(user.email, 25);
    for (const r of replies) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual(INVALID);
    }
    const state = await lockState(user.id);
    expect(state.count).toBe(10);
    expect(state.fifteen).toBe(true);
    const details = (await securityEvents(stack.sql, user.email)).map((e) => e.detail);
    expect(details.filter((d) => d === 'password')).toHaveLength(10);
    expect(details.filter((d) => d === 'locked')).toHaveLength(15);
    expect(new Set((await securityEvents(stack.sql, user.email)).map((e) => e.client_ip)).size).toBe(25);

    // During the lockout the right password gets the same answer, opens nothing, and moves nothing.
    const right = await signIn(stack, { email: user.email, password: PASSWORD }, freshAddress());
    expect(right.status).toBe(401);
    expect(right.body).toEqual(INVALID);
    expect(await sessions(user.id)).toBe(0);
    const after = await lockState(user.id);
    expect(after.count).toBe(10);
    expect(after.until).toEqual(state.until);
    expect((await securityEvents(stack.sql, user.email)).at(-1)).toMatchObject({ type: 'auth.login.failed', detail: 'locked' });
  });

  test('after the fifteen minutes the right password signs in and clears the count', async () => {
    const { user } = await consoleUser(stack, admin, PASSWORD, 'expired-lock');
    await wrong(user.email, 10);
    expect((await lockState(user.id)).fifteen).toBe(true);
    await stack.sql.query(`UPDATE users SET password_locked_until = now() - interval '1 second' WHERE id = $1`, [user.id]);
    const r = await signIn(stack, { email: user.email, password: PASSWORD }, freshAddress());
    expect(r.status).toBe(200);
    expect(await lockState(user.id)).toMatchObject({ count: 0, until: null });
  });

  test('a right password before the tenth failure clears the count: nine more wrong ones do not lock', async () => {
    const { user } = await consoleUser(stack, admin, PASSWORD, 'cleared');
    await wrong(user.email, 9);
    expect(await lockState(user.id)).toMatchObject({ count: 9, until: null });
    expect((await signIn(stack, { email: user.email, password: PASSWORD }, freshAddress())).status).toBe(200);
    expect(await lockState(user.id)).toMatchObject({ count: 0, until: null });
    // The good sign-in raised the stored hash to today's cost; back to the cheap one, so nine at once stay quick.
    await setPassword(stack.sql, user.id, PASSWORD);
    await wrong(user.email, 9);
    expect(await lockState(user.id)).toMatchObject({ count: 9, until: null });
    expect((await signIn(stack, { email: user.email, password: PASSWORD }, freshAddress())).status).toBe(200);
  });

  test('another account is not touched by one account\'s lockout', async () => {
    const [victim, bystander] = [await consoleUser(stack, admin, PASSWORD, 'victim'), await consoleUser(stack, admin, PASSWORD, 'bystander')];
    await wrong(victim.user.email, 10);
    expect((await lockState(victim.user.id)).fifteen).toBe(true);
    expect((await signIn(stack, { email: bystander.user.email, password: PASSWORD }, freshAddress())).status).toBe(200);
  });
});

describe('ratelimit.login_per_minute', () => {
  test('counts sign-in attempts per client address: the sixth from one address is 429, another address is still heard', async () => {
    const { user } = await consoleUser(stack, admin, PASSWORD, 'limited');
    await awayFromWindowEdge();
    const ip = freshAddress();
    for (let i = 0; i < LOGIN_PER_MINUTE; i++) {
      expect((await signIn(stack, { email: user.email, password: `wrong ${i}` }, ip)).status).toBe(401);
    }
    const refused = await signIn(stack, { email: user.email, password: PASSWORD }, ip);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe(`rate limit exceeded: ${LOGIN_PER_MINUTE} requests per minute`);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Refused before the password was looked at: not counted, not recorded.
    expect((await lockState(user.id)).count).toBe(LOGIN_PER_MINUTE);
    expect(await securityEvents(stack.sql, user.email)).toHaveLength(LOGIN_PER_MINUTE);
    expect((await signIn(stack, { email: user.email, password: PASSWORD }, freshAddress())).status).toBe(200);
  });
});
