// A platform admin sets a user's password (issue 26 item 6): PUT
// /api/v1/admin/users/{id}/password. A first password for an account made by
// POST /api/v1/admin/users (which has none, and whose only other way in is the
// reset mail); replacing one signs out every session, as a reset does. The
// console's password rule applies; the lockout is cleared and pending reset
// links spent; the user's own trail and the admin trail record it. Everything
// but a platform credential is refused, and a refusal changes nothing.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type TestStack } from './support/stack.js';
import { cookieOf, setPassword, signIn, withSession } from './support/console.js';
import { eventually } from './support/wait.js';

const PASSWORD = 'correct horse battery staple';

let stack: TestStack;
let admin: string;
let credentialId: string;
/** Each sign-in from an address of its own: the login limiter counts per address. */
let addresses = 0;
const client = () => `203.0.113.${++addresses}`;

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack, { name: 'ops-passwords' });
  const listed = await stack.call('GET', '/api/v1/admin/credentials', { token: admin });
  credentialId = listed.body.credentials.find((c: { name: string }) => c.name === 'ops-passwords').id;
});
afterAll(async () => { await stack?.stop(); });

const setUserPassword = (userId: string, body: unknown, opts: { token?: string; headers?: Record<string, string> } = { token: admin }) =>
  stack.call('PUT', `/api/v1/admin/users/${userId}/password`, { ...opts, body });
const sessionWorks = async (cookie: string) => (await stack.call('GET', '/app/api/session', { headers: withSession(stack, cookie) })).status;
const row = async (userId: string) => (await stack.sql.query(
  'SELECT password_hash, failed_password_count, password_locked_until, sessions_valid_after, email_verified_at FROM users WHERE id = $1', [userId])).rows[0];
const ownTrail = async (userId: string) => (await stack.sql.query(
  `SELECT type, detail, status FROM audit_events WHERE category = 'security' AND actor_id = $1 AND type = 'auth.password.set_by_admin' ORDER BY created_at, id`, [userId])).rows;
const adminTrail = async (userId: string) => (await stack.sql.query(
  `SELECT type, actor_id, path, status FROM audit_events WHERE category = 'security' AND type = 'user.password_set' AND path LIKE $1`, [`%/${userId}/%`])).rows;

describe('PUT /api/v1/admin/users/{id}/password', () => {
  test('a first password: the account signs in with it; its other sessions stay; a pending reset link is spent; both trails record it', async () => {
    const { user } = await seedProject(stack, admin, 'first');
    expect((await row(user.id)).password_hash).toBeNull();
    // Without a password no sign-in works: the case the route is for.
    expect((await signIn(stack, { email: user.email, password: PASSWORD }, client())).status).toBe(401);
    const passkeySession = await sessionCookie(stack, user.id, 'passkey');
    // A reset link asked for earlier (as POST /app/api/password-reset writes it) must not undo what the operator sets.
    await stack.sql.query(`INSERT INTO password_resets (user_id, token_hash, expires_at) VALUES ($1, $2, now() + interval '1 hour')`, [user.id, 'a'.repeat(64)]);

    const r = await setUserPassword(user.id, { password: PASSWORD });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toEqual({ user: { id: user.id, email: user.email, name: user.name, default_project_id: expect.any(String), platform_admin: false, created_at: user.created_at }, replaced: false });

    const signedIn = await signIn(stack, { email: user.email, password: PASSWORD }, client());
    expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
    expect(await sessionWorks(passkeySession)).toBe(200);
    const { rows: links } = await stack.sql.query('SELECT used_at FROM password_resets WHERE user_id = $1', [user.id]);
    expect(links.map((l) => l.used_at !== null)).toEqual([true]);
    // The operator proved nothing about the mailbox.
    expect((await row(user.id)).email_verified_at).toBeNull();

    expect(await ownTrail(user.id)).toEqual([{ type: 'auth.password.set_by_admin', detail: `credential=${credentialId} first`, status: 200 }]);
    // The audit middleware writes after the answer.
    expect(await eventually(() => adminTrail(user.id), (rows) => rows.length > 0)).toEqual([
      { type: 'user.password_set', actor_id: credentialId, path: `/api/v1/admin/users/${user.id}/password`, status: 200 },
    ]);
    // The person sees it in their own trail.
    const own = await stack.call('GET', '/app/api/account/security-events', { headers: withSession(stack, cookieOf(signedIn.headers.get('set-cookie'))) });
    expect(own.body.events.map((e: { type: string }) => e.type)).toContain('auth.password.set_by_admin');
  });

  test('replacing a password signs out every session and clears the lockout; the old password stops working', async () => {
    const { user } = await seedProject(stack, admin, 'replace');
    await setPassword(stack.sql, user.id, 'the old password here');
    const first = await signIn(stack, { email: user.email, password: 'the old password here' }, client());
    expect(first.status).toBe(200);
    const cookie = cookieOf(first.headers.get('set-cookie'));
    const other = await sessionCookie(stack, user.id, 'passkey');
    await stack.sql.query(`UPDATE users SET failed_password_count = 10, password_locked_until = now() + interval '15 minutes' WHERE id = $1`, [user.id]);

    const r = await setUserPassword(user.id, { password: PASSWORD });
    expect([r.status, r.body.replaced]).toEqual([200, true]);
    expect(await sessionWorks(cookie)).toBe(401);
    expect(await sessionWorks(other)).toBe(401);
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [user.id])).rows[0].n).toBe(0);
    expect(await row(user.id)).toMatchObject({ failed_password_count: 0, password_locked_until: null });
    expect((await signIn(stack, { email: user.email, password: 'the old password here' }, client())).status).toBe(401);
    expect((await signIn(stack, { email: user.email, password: PASSWORD }, client())).status).toBe(200);
    expect(await ownTrail(user.id)).toEqual([{ type: 'auth.password.set_by_admin', detail: `credential=${credentialId} replaced`, status: 200 }]);
  });

  test('a password that breaks the rule, an unknown or malformed user, an unknown field: refused naming it, nothing changed', async () => {
    const { user } = await seedProject(stack, admin, 'refusals');
    await setPassword(stack.sql, user.id, 'the old password here');
    const session = await sessionCookie(stack, user.id);
    const before = await row(user.id);
    const localPart = user.email.split('@')[0];
    const cases: [unknown, number, unknown][] = [
      [{ password: 'short' }, 400, { error: 'password: must be at least 10 characters', fields: { password: 'must be at least 10 characters' } }],
      [{ password: ' '.repeat(12) }, 400, { error: 'password: must not be only spaces', fields: { password: 'must not be only spaces' } }],
      [{ password: 'x'.repeat(129) }, 400, { error: 'password: must be at most 128 characters', fields: { password: 'must be at most 128 characters' } }],
      [{ password: user.email.toUpperCase() }, 400, { error: 'password: must not be the account\'s email address', fields: { password: 'must not be the account\'s email address' } }],
      // The local part (refusals-xxxxxxxx, over 10 characters) is refused as the address is.
      [{ password: localPart }, 400, { error: 'password: must not be the account\'s email address', fields: { password: 'must not be the account\'s email address' } }],
      [{}, 400, expect.objectContaining({ fields: { password: expect.any(String) } })],
      [{ password: PASSWORD, must_change: true }, 400, expect.objectContaining({ error: expect.stringContaining('must_change') })],
    ];
    for (const [body, status, answer] of cases) {
      const r = await setUserPassword(user.id, body);
      expect([JSON.stringify(body), r.status, r.body]).toEqual([JSON.stringify(body), status, answer]);
    }
    const unknown = await setUserPassword(crypto.randomUUID(), { password: PASSWORD });
    expect([unknown.status, unknown.body]).toEqual([404, { error: 'user not found' }]);
    const malformed = await setUserPassword('not-a-uuid', { password: PASSWORD });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toContain('id');

    expect(await row(user.id)).toEqual(before);
    expect(await sessionWorks(session)).toBe(200);
    expect(await ownTrail(user.id)).toEqual([]);
  });

  test('only a platform credential: a project key with every permission, an owner\'s session and no credential are refused, nothing changed', async () => {
    const tenant = await seedProject(stack, admin, 'attackers');
    const victim = await seedProject(stack, admin, 'victim');
    await setPassword(stack.sql, victim.user.id, 'the victim password');
    const before = await row(victim.user.id);
    const key = (await tenant.key(['*'])).token;
    const owner = await sessionCookie(stack, tenant.user.id);

    const byKey = await setUserPassword(victim.user.id, { password: PASSWORD }, { token: key });
    expect(byKey.status).toBe(403);
    const bySession = await setUserPassword(victim.user.id, { password: PASSWORD }, { headers: withSession(stack, owner) });
    expect(bySession.status).toBe(403);
    // Not even on oneself: a session changes its password by the reset link.
    const own = await setUserPassword(tenant.user.id, { password: PASSWORD }, { headers: withSession(stack, owner) });
    expect(own.status).toBe(403);
    const anonymous = await setUserPassword(victim.user.id, { password: PASSWORD }, { headers: {} });
    expect(anonymous.status).toBe(401);

    expect(await row(victim.user.id)).toEqual(before);
    expect(await ownTrail(victim.user.id)).toEqual([]);
    expect((await signIn(stack, { email: victim.user.email, password: 'the victim password' }, client())).status).toBe(200);
  });
});
