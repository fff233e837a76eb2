// TOTP two-factor (docs/console.md): turning it on with a code computed here
// by the `otpauth` library from the secret the service gave, sign-in asking
// for the code, a code never accepted twice, single-use recovery codes, and
// turning it off; each step in the user's security trail.
import * as OTPAuth from 'otpauth';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, startTestStack, type TestStack } from './support/stack.js';
import { consoleUser, cookieOf, securityEvents, signIn, withSession } from './support/console.js';
import { eventually } from './support/wait.js';

const PASSWORD = 'correct horse battery staple';
const STEP_MS = 30_000;

let stack: TestStack;
let admin: string;

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '1000' } });
  admin = await platformToken(stack);
});
afterAll(async () => { await stack?.stop(); });

/** The code of the step `offset` steps from now (the service accepts -1, 0 and +1). */
const codeAt = (secret: string, offset: number) => new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offset * STEP_MS });

/** Waits out the end of a step, so the codes of one test keep their places in the window. */
async function earlyInStep(needMs = 8_000) {
  const into = Date.now() % STEP_MS;
  if (into > STEP_MS - needMs) await new Promise((r) => setTimeout(r, STEP_MS - into + 100));
}

/** A signed-in user with two-factor on: the secret, the recovery codes and the session cookie. */
async function withTwoFactor(name: string) {
  const tenant = await consoleUser(stack, admin, PASSWORD, name);
  const cookie = cookieOf((await signIn(stack, { email: tenant.user.email, password: PASSWORD })).headers.get('set-cookie'));
  const started = await stack.call('POST', '/app/api/account/totp', { headers: withSession(stack, cookie) });
  expect(started.status).toBe(200);
  const secret: string = started.body.secret;
  const confirmed = await stack.call('POST', '/app/api/account/totp/confirm', { body: { code: codeAt(secret, -1) }, headers: withSession(stack, cookie) });
  expect(confirmed.status, JSON.stringify(confirmed.body)).toBe(200);
  return { ...tenant, cookie, secret, recoveryCodes: confirmed.body.recovery_codes as string[] };
}

describe('turning two-factor on', () => {
  test('the otpauth URI names the account; the secret is sealed; a wrong code changes nothing; a right one turns it on with ten recovery codes', async () => {
    await earlyInStep();
    const tenant = await consoleUser(stack, admin, PASSWORD, 'enable');
    const cookie = cookieOf((await signIn(stack, { email: tenant.user.email, password: PASSWORD })).headers.get('set-cookie'));
    const started = await stack.call('POST', '/app/api/account/totp', { headers: withSession(stack, cookie) });
    expect(started.status).toBe(200);
    const uri = OTPAuth.URI.parse(started.body.otpauth_uri) as OTPAuth.TOTP;
    expect(uri).toBeInstanceOf(OTPAuth.TOTP);
    expect({ issuer: uri.issuer, label: uri.label, digits: uri.digits, period: uri.period, algorithm: uri.algorithm })
      .toEqual({ issuer: 'edgemail', label: tenant.user.email, digits: 6, period: 30, algorithm: 'SHA1' });
    expect(uri.secret.base32).toBe(started.body.secret);
    const { rows: [row] } = await stack.sql.query('SELECT totp_secret_sealed, totp_enabled_at FROM users WHERE id = $1', [tenant.user.id]);
    expect(row.totp_secret_sealed).toMatch(/^v1\./);
    expect(row.totp_secret_sealed).not.toContain(started.body.secret);
    expect(row.totp_enabled_at).toBeNull();

    const wrong = await stack.call('POST', '/app/api/account/totp/confirm', { body: { code: String((Number(codeAt(started.body.secret, 0)) + 1) % 1e6).padStart(6, '0') }, headers: withSession(stack, cookie) });
    expect(wrong.status).toBe(400);
    expect((await stack.sql.query('SELECT totp_enabled_at FROM users WHERE id = $1', [tenant.user.id])).rows[0].totp_enabled_at).toBeNull();

    const confirmed = await stack.call('POST', '/app/api/account/totp/confirm', { body: { code: codeAt(started.body.secret, 0) }, headers: withSession(stack, cookie) });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.recovery_codes).toHaveLength(10);
    expect(new Set(confirmed.body.recovery_codes).size).toBe(10);
    const { rows: stored } = await stack.sql.query('SELECT code_hash FROM recovery_codes WHERE user_id = $1', [tenant.user.id]);
    expect(stored).toHaveLength(10);
    for (const code of confirmed.body.recovery_codes) expect(stored.map((s) => s.code_hash)).not.toContain(code);
    expect((await stack.call('GET', '/app/api/session', { headers: withSession(stack, cookie) })).body.user.two_factor_enabled).toBe(true);
    await eventually(() => securityEvents(stack.sql, tenant.user.email), (e) => e.some((x) => x.type === 'auth.2fa.enabled'));
    // On already: starting again is refused and keeps the secret.
    expect((await stack.call('POST', '/app/api/account/totp', { headers: withSession(stack, cookie) })).status).toBe(409);
  });
});

describe('a session signed in over 15 minutes ago', () => {
  test('cannot start turning two-factor on (403: sign in again); nothing is stored', async () => {
    const tenant = await consoleUser(stack, admin, PASSWORD, 'stale');
    const cookie = cookieOf((await signIn(stack, { email: tenant.user.email, password: PASSWORD })).headers.get('set-cookie'));
    await stack.sql.query(`UPDATE sessions SET created_at = now() - interval '16 minutes' WHERE user_id = $1`, [tenant.user.id]);
    const refused = await stack.call('POST', '/app/api/account/totp', { headers: withSession(stack, cookie) });
    expect(refused.status).toBe(403);
    expect(refused.body).toEqual({ error: 'sign in again to turn on two-factor authentication: this session signed in more than 15 minutes ago' });
    expect((await stack.sql.query('SELECT totp_secret_sealed FROM users WHERE id = $1', [tenant.user.id])).rows[0].totp_secret_sealed).toBeNull();
  });
});

describe('signing in with two-factor on', () => {
  test('no code: 401 two_factor_required; a wrong code: 401 and counted; the right code signs in; the same code again is refused', async () => {
    await earlyInStep();
    const { user, secret } = await withTwoFactor('sign-in');
    const none = await signIn(stack, { email: user.email, password: PASSWORD });
    expect(none.status).toBe(401);
    expect(none.body).toMatchObject({ two_factor_required: true });
    expect(none.headers.get('set-cookie')).toBeNull();

    const bad = await signIn(stack, { email: user.email, password: PASSWORD, totp_code: String((Number(codeAt(secret, 0)) + 1) % 1e6).padStart(6, '0') });
    expect(bad.status).toBe(401);
    expect(bad.body).toEqual({ error: 'invalid two-factor code', two_factor_required: true });
    expect((await stack.sql.query('SELECT failed_password_count FROM users WHERE id = $1', [user.id])).rows[0].failed_password_count).toBe(1);
    // A wrong password still gets the password leg's answer: the second factor is not revealed.
    expect((await signIn(stack, { email: user.email, password: 'nope', totp_code: codeAt(secret, 0) })).body).toEqual({ error: 'invalid email or password' });

    const code = codeAt(secret, 0);
    const good = await signIn(stack, { email: user.email, password: PASSWORD, totp_code: code });
    expect(good.status).toBe(200);
    expect(good.headers.get('set-cookie')).toMatch(/^__Host-edgemail_session=/);
    expect((await stack.sql.query('SELECT failed_password_count FROM users WHERE id = $1', [user.id])).rows[0].failed_password_count).toBe(0);

    const replay = await signIn(stack, { email: user.email, password: PASSWORD, totp_code: code });
    expect(replay.status).toBe(401);
    expect(replay.body).toEqual({ error: 'invalid two-factor code', two_factor_required: true });
    // An earlier step's code, though inside the window, is refused too: steps only move forward.
    expect((await signIn(stack, { email: user.email, password: PASSWORD, totp_code: codeAt(secret, -1) })).status).toBe(401);
    // The next step's code is fresh.
    expect((await signIn(stack, { email: user.email, password: PASSWORD, totp_code: codeAt(secret, 1) })).status).toBe(200);

    const details = (await securityEvents(stack.sql, user.email)).filter((e) => e.type.startsWith('auth.login')).map((e) => `${e.type} ${e.detail}`);
    expect(details).toEqual([
      'auth.login.succeeded password', // withTwoFactor's sign-in, before it was on
      'auth.login.failed totp_required', 'auth.login.failed totp', 'auth.login.failed password',
      'auth.login.succeeded password', 'auth.login.failed totp', 'auth.login.failed totp', 'auth.login.succeeded password',
    ]);
  });

  test('a recovery code signs in once; used twice it is refused', async () => {
    await earlyInStep();
    const { user, recoveryCodes } = await withTwoFactor('recovery');
    const first = await signIn(stack, { email: user.email, password: PASSWORD, recovery_code: recoveryCodes[3]!.toUpperCase() });
    expect(first.status).toBe(200);
    const again = await signIn(stack, { email: user.email, password: PASSWORD, recovery_code: recoveryCodes[3]! });
    expect(again.status).toBe(401);
    expect(again.body).toEqual({ error: 'invalid recovery code', two_factor_required: true });
    expect((await securityEvents(stack.sql, user.email)).at(-1)).toMatchObject({ type: 'auth.login.failed', detail: 'recovery_code' });
    expect((await stack.sql.query('SELECT count(*) FROM recovery_codes WHERE user_id = $1 AND used_at IS NOT NULL', [user.id])).rows[0].count).toBe('1');
  });
});

describe('turning two-factor off', () => {
  test('a wrong password is refused (403) and changes nothing; the right one turns it off, recorded as auth.2fa.disabled', async () => {
    await earlyInStep();
    const { user, cookie } = await withTwoFactor('disable');
    const wrong = await stack.call('DELETE', '/app/api/account/totp', { body: { password: 'nope' }, headers: withSession(stack, cookie) });
    expect(wrong.status).toBe(403);
    expect((await stack.sql.query('SELECT totp_enabled_at FROM users WHERE id = $1', [user.id])).rows[0].totp_enabled_at).not.toBeNull();
    const off = await stack.call('DELETE', '/app/api/account/totp', { body: { password: PASSWORD }, headers: withSession(stack, cookie) });
    expect(off.status).toBe(204);
    const { rows: [row] } = await stack.sql.query('SELECT totp_secret_sealed, totp_enabled_at, (SELECT count(*) FROM recovery_codes WHERE user_id = $1) AS codes FROM users WHERE id = $1', [user.id]);
    expect(row).toEqual({ totp_secret_sealed: null, totp_enabled_at: null, codes: '0' });
    await eventually(() => securityEvents(stack.sql, user.email), (e) => e.some((x) => x.type === 'auth.2fa.disabled'));
    expect((await signIn(stack, { email: user.email, password: PASSWORD })).status).toBe(200);
  });

  // Issue 25: a stolen session must not turn this route into an unlimited password (or code) oracle.
  const LOCKED_HERE = { error: 'too many wrong passwords or codes: this account is locked for up to 15 minutes, try again later' };
  const lockState = async (userId: string) => (await stack.sql.query(
    'SELECT failed_password_count AS count, coalesce(password_locked_until > now(), false) AS locked, totp_enabled_at IS NOT NULL AS totp FROM users WHERE id = $1', [userId])).rows[0];
  /** A six-digit code that is none of the three the service accepts now. */
  const wrongCode = (secret: string) => {
    const accepted = new Set([-1, 0, 1].map((o) => codeAt(secret, o)));
    for (let n = 1; ; n++) { const c = String((Number(codeAt(secret, 0)) + n * 7919) % 1e6).padStart(6, '0'); if (!accepted.has(c)) return c; }
  };

  test('ten wrong passwords there lock the account as sign-in does; during the lockout the right password is refused there and at sign-in', async () => {
    await earlyInStep(15_000);
    const { user, cookie, secret } = await withTwoFactor('disable-guesses');
    for (let i = 0; i < 10; i++) {
      const r = await stack.call('DELETE', '/app/api/account/totp', { body: { password: `guess ${i}` }, headers: withSession(stack, cookie) });
      expect([r.status, r.body]).toEqual([403, { error: 'wrong password' }]);
    }
    expect(await lockState(user.id)).toEqual({ count: 10, locked: true, totp: true });
    // Sign-in with the right password (and a right code) gets the invalid-credentials answer of a locked account.
    const signedIn = await signIn(stack, { email: user.email, password: PASSWORD, totp_code: codeAt(secret, 0) });
    expect([signedIn.status, signedIn.body]).toEqual([401, { error: 'invalid email or password' }]);
    // And turning two-factor off is refused too, the right password or code included; nothing moves.
    for (const body of [{ password: PASSWORD }, { code: codeAt(secret, 0) }, { password: 'guess 11' }]) {
      const r = await stack.call('DELETE', '/app/api/account/totp', { body, headers: withSession(stack, cookie) });
      expect([r.status, r.body]).toEqual([403, LOCKED_HERE]);
    }
    expect(await lockState(user.id)).toEqual({ count: 10, locked: true, totp: true });
  });

  test('wrong codes there count too, and share one count with sign-in\'s wrong passwords', async () => {
    await earlyInStep(15_000);
    const { user, cookie, secret } = await withTwoFactor('disable-codes');
    for (let i = 0; i < 5; i++) {
      const r = await stack.call('DELETE', '/app/api/account/totp', { body: { code: wrongCode(secret) }, headers: withSession(stack, cookie) });
      expect([r.status, r.body]).toEqual([403, { error: 'wrong or already used code' }]);
    }
    expect(await lockState(user.id)).toEqual({ count: 5, locked: false, totp: true });
    for (let i = 0; i < 5; i++) expect((await signIn(stack, { email: user.email, password: `guess ${i}` })).status).toBe(401);
    expect(await lockState(user.id)).toEqual({ count: 10, locked: true, totp: true });
    expect((await signIn(stack, { email: user.email, password: PASSWORD, totp_code: codeAt(secret, 0) })).body).toEqual({ error: 'invalid email or password' });
    const r = await stack.call('DELETE', '/app/api/account/totp', { body: { code: codeAt(secret, 0) }, headers: withSession(stack, cookie) });
    expect([r.status, r.body]).toEqual([403, LOCKED_HERE]);
    expect((await lockState(user.id)).totp).toBe(true);
  });

  test('a right password there clears the count, as a complete sign-in does', async () => {
    await earlyInStep();
    const { user, cookie } = await withTwoFactor('disable-clears');
    for (let i = 0; i < 9; i++) await stack.call('DELETE', '/app/api/account/totp', { body: { password: `guess ${i}` }, headers: withSession(stack, cookie) });
    expect(await lockState(user.id)).toEqual({ count: 9, locked: false, totp: true });
    expect((await stack.call('DELETE', '/app/api/account/totp', { body: { password: PASSWORD }, headers: withSession(stack, cookie) })).status).toBe(204);
    expect(await lockState(user.id)).toEqual({ count: 0, locked: false, totp: false });
  });
});
