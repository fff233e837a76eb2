// Password reset by mail (docs/console.md, "Password reset"): the same 202 for
// every address, a single-use expiring link mailed to the account, and
// redeeming it sets the password, clears the lockout, signs out every session
// and writes `auth.password_reset.completed` to the user's security trail.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { hashPassword } from '../edge/src/services/console/password.js';
import { platformToken, seedProject, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { awayFromWindowEdge, eventually } from './support/wait.js';

const LOGIN_LIMIT = 20;
const ANSWER = { status: 'accepted', message: 'if an account has this address, a password reset link is on its way' };
const REFUSED = { error: 'invalid, expired or already used password reset token', fields: { token: 'invalid, expired or already used' } };

let stack: TestStack;
let acme: SeededProject;
/** Each test's requests come from an address of their own: the login limiter counts per address. */
let addresses = 0;
const client = () => `203.0.113.${++addresses}`;

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: String(LOGIN_LIMIT) } });
  acme = await seedProject(stack, await platformToken(stack), 'acme');
  await stack.sql.query('UPDATE users SET password_hash = $1 WHERE id = $2', [hashPassword('the old password'), acme.user.id]);
});
afterAll(async () => { await stack?.stop(); });

const post = (path: string, body: unknown, ip: string) =>
  stack.call('POST', path, { headers: { origin: stack.url, 'cf-connecting-ip': ip }, body });
const signIn = (password: string, ip: string) => post('/app/api/session', { email: acme.user.email, password }, ip);
const mailsTo = async (address: string) => (await stack.sql.query(
  `SELECT m.text, e.project_id FROM emails e JOIN outbound_messages m ON m.id = e.message_id WHERE lower(e.recipient) = lower($1) AND m.origin = 'system' ORDER BY m.created_at`, [address])).rows;
const tokenIn = (text: string) => /\/app\/password-reset#token=([A-Za-z0-9_-]+)/.exec(text)![1]!;

describe('asking for a link', () => {
  test('the same 202 for an account and for no account; only the account gets mail', async () => {
    const ip = client();
    const unknown = await post('/app/api/password-reset', { email: 'nobody@acme.example' }, ip);
    const known = await post('/app/api/password-reset', { email: acme.user.email.toUpperCase() }, ip);
    expect([unknown.status, unknown.body]).toEqual([202, ANSWER]);
    expect([known.status, known.body]).toEqual([202, ANSWER]);
    const [mail] = await eventually(() => mailsTo(acme.user.email), (rows) => rows.length === 1);
    expect(mail.text).toMatch(/https?:\/\/[^/\s]+\/app\/password-reset#token=[A-Za-z0-9_-]{43}\n/);
    expect(mail.project_id).toBe('00000000-0000-4000-8000-00000000e0a1');
    expect(await mailsTo('nobody@acme.example')).toEqual([]);
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM password_resets')).rows[0].n).toBe(1);

    // Asked again within the minute: the same 202, no second mail. A mail to another account,
    // asked for afterwards, is the sign that the request before it was handled.
    expect((await post('/app/api/password-reset', { email: acme.user.email }, ip)).body).toEqual(ANSWER);
    const { rows: [other] } = await stack.sql.query(`INSERT INTO users (email) VALUES ('other@acme.example') RETURNING id`);
    await post('/app/api/password-reset', { email: 'other@acme.example' }, ip);
    await eventually(() => mailsTo('other@acme.example'), (rows) => rows.length === 1);
    expect(await mailsTo(acme.user.email)).toHaveLength(1);
    await stack.sql.query('DELETE FROM users WHERE id = $1', [other.id]);
  });

  test('a malformed address is 400; the limiter counts each client address', async () => {
    const ip = client();
    expect((await post('/app/api/password-reset', { email: 'not an address' }, ip)).status).toBe(400);
    await awayFromWindowEdge();
    const statuses: number[] = [];
    for (let i = 0; i <= LOGIN_LIMIT; i++) statuses.push((await post('/app/api/password-reset', { email: `x${i}@nowhere.example` }, ip)).status);
    expect(statuses).toEqual([...Array(LOGIN_LIMIT).fill(202), 429]);
    expect((await post('/app/api/password-reset', { email: 'y@nowhere.example' }, client())).status).toBe(202);
  });
});

describe('redeeming the link', () => {
  test('sets the password, clears the lockout, signs out every session, and is written to the security trail', async () => {
    const ip = client();
    const session = await signIn('the old password', ip);
    expect(session.status, JSON.stringify(session.body)).toBe(200);
    const cookie = session.headers.get('set-cookie')!.split(';')[0]!;
    expect((await stack.call('GET', '/api/v1/members', { headers: { cookie } })).status).toBe(200);

    await stack.sql.query('DELETE FROM password_resets');
    await post('/app/api/password-reset', { email: acme.user.email }, ip);
    const mails = await eventually(() => mailsTo(acme.user.email), (rows) => rows.length === 2);
    const token = tokenIn(mails[1].text);
    await stack.sql.query(`UPDATE users SET failed_password_count = 7, password_locked_until = now() + interval '10 minutes' WHERE id = $1`, [acme.user.id]);
    // A second pending link, spent along with the one used.
    const { rows: [other] } = await stack.sql.query(
      `INSERT INTO password_resets (user_id, token_hash, expires_at) VALUES ($1, 'x', now() + interval '1 hour') RETURNING id`, [acme.user.id]);

    // A password that breaks the rule changes nothing; the link still works.
    let r = await post('/app/api/password-reset/complete', { token, password: acme.user.email }, ip);
    expect(r).toMatchObject({ status: 400, body: { error: 'password: must not be the account\'s email address' } });
    expect((await stack.call('GET', '/api/v1/members', { headers: { cookie } })).status).toBe(200);

    r = await post('/app/api/password-reset/complete', { token, password: 'a brand new password' }, ip);
    expect(r.status, JSON.stringify(r.body)).toBe(204);
    expect((await stack.call('GET', '/api/v1/members', { headers: { cookie } })).status).toBe(401);
    const { rows: [user] } = await stack.sql.query('SELECT failed_password_count, password_locked_until, email_verified_at FROM users WHERE id = $1', [acme.user.id]);
    expect(user).toEqual({ failed_password_count: 0, password_locked_until: null, email_verified_at: expect.any(Date) });
    expect((await stack.sql.query('SELECT used_at FROM password_resets WHERE id = $1', [other.id])).rows[0].used_at).toEqual(expect.any(Date));
    expect((await signIn('the old password', ip)).status).toBe(401);
    expect((await signIn('a brand new password', ip)).status).toBe(200);

    const { rows: trail } = await stack.sql.query(`SELECT * FROM audit_events WHERE type = 'auth.password_reset.completed'`);
    expect(trail).toEqual([expect.objectContaining({
      category: 'security', project_id: null, actor_id: acme.user.id, actor_email: acme.user.email, client_ip: ip,
      method: 'POST', path: '/app/api/password-reset/complete', status: 204,
    })]);

    // Used once.
    r = await post('/app/api/password-reset/complete', { token, password: 'yet another password' }, ip);
    expect(r).toMatchObject({ status: 400, body: REFUSED });
    expect((await signIn('a brand new password', ip)).status).toBe(200);
  });

  test('an expired or unknown token is refused the same way, and changes nothing', async () => {
    const ip = client();
    await stack.sql.query('DELETE FROM password_resets');
    await post('/app/api/password-reset', { email: acme.user.email }, ip);
    const mails = await eventually(() => mailsTo(acme.user.email), (rows) => rows.length === 3);
    await stack.sql.query(`UPDATE password_resets SET expires_at = now() - interval '1 second'`);
    const before = (await stack.sql.query('SELECT password_hash, sessions_valid_after FROM users WHERE id = $1', [acme.user.id])).rows[0];
    for (const token of [tokenIn(mails[2].text), 'made-up-token']) {
      expect(await post('/app/api/password-reset/complete', { token, password: 'a third good password' }, ip)).toMatchObject({ status: 400, body: REFUSED });
    }
    expect((await stack.sql.query('SELECT password_hash, sessions_valid_after FROM users WHERE id = $1', [acme.user.id])).rows[0]).toEqual(before);
  });
});
