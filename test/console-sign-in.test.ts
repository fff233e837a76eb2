// Password sign-in and browser sessions (docs/console.md): the cookie, who am
// I, each refusal changing nothing and leaving its audit event, idle and
// absolute expiry, sign-out and sign-out everywhere, switching projects, and
// the session judged by membership role on /api/v1.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, startTestStack, type TestStack } from './support/stack.js';
import { consoleUser, cookieOf, originOf, securityEvents, setPassword, signIn, withSession } from './support/console.js';
import { eventually } from './support/wait.js';

const PASSWORD = 'correct horse battery staple';
const INVALID = { error: 'invalid email or password' };

let stack: TestStack;
let admin: string;

beforeAll(async () => {
  // Sign-ins from one address well past ratelimit.login_per_minute: console-lockout.test.ts tests the limit.
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_LOGIN_PER_MINUTE: '1000' } });
  admin = await platformToken(stack);
});
afterAll(async () => { await stack?.stop(); });

const sessionCount = async (userId: string) => Number((await stack.sql.query('SELECT count(*) FROM sessions WHERE user_id = $1', [userId])).rows[0].count);
const whoAmI = (cookie: string) => stack.call('GET', '/app/api/session', { headers: withSession(stack, cookie) });

async function signedIn(name: string) {
  const tenant = await consoleUser(stack, admin, PASSWORD, name);
  const r = await signIn(stack, { email: tenant.user.email, password: PASSWORD });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return { ...tenant, cookie: cookieOf(r.headers.get('set-cookie')), reply: r };
}

describe('signing in', () => {
  test('opens a session: the cookie (HttpOnly, SameSite=Strict, Secure: server.public_url is https here), who am I, the event, the hash raised to today\'s cost', async () => {
    const { user, project, cookie, reply } = await signedIn('happy');
    const setCookie = reply.headers.get('set-cookie')!;
    // `__Host-`: Secure, Path=/ and no Domain, so a sibling subdomain cannot plant one.
    expect(setCookie).toMatch(/^__Host-edgemail_session=[A-Za-z0-9_-]{43}; Path=\/; Max-Age=604800; HttpOnly; SameSite=Strict; Secure$/);
    expect(reply.body.user).toMatchObject({ id: user.id, email: user.email, two_factor_enabled: false, default_project_id: project.id });
    expect(reply.body.session).toMatchObject({ method: 'password', current_project_id: project.id });
    // Only the token's SHA-256 is stored.
    const token = cookie.split('=')[1]!;
    const { rows } = await stack.sql.query('SELECT token_hash, client_ip, method FROM sessions WHERE user_id = $1', [user.id]);
    expect(rows).toEqual([{ token_hash: createHash('sha256').update(token).digest('hex'), client_ip: expect.any(String), method: 'password' }]);

    const me = await whoAmI(cookie);
    expect(me.status).toBe(200);
    expect(me.body.user.id).toBe(user.id);
    expect(me.body.memberships).toEqual([{ project_id: project.id, project_name: 'happy', role: 'owner', group_id: null, sso_required: false }]);

    expect((await eventually(() => securityEvents(stack.sql, user.email), (e) => e.length === 1))[0])
      .toMatchObject({ type: 'auth.login.succeeded', detail: 'password', status: 200, actor_id: user.id });
    // The test stored a cheap hash; the good sign-in replaced it at today's cost (after answering).
    const stored = async () => (await stack.sql.query('SELECT password_hash FROM users WHERE id = $1', [user.id])).rows[0].password_hash as string;
    expect(await eventually(stored, (h) => !h.startsWith('scrypt$1024$'), 15_000)).toMatch(/^scrypt\$32768\$8\$1\$/);
  });

  test('a plain `edgemail_session` cookie, as a sibling subdomain could plant it, is no session here (Secure site: only `__Host-` is read)', async () => {
    // The attacker's own live session, planted under the name a Domain cookie can take.
    const attacker = await signedIn('planter');
    const victim = await signedIn('planted');
    const attackerToken = attacker.cookie.split('=')[1]!;
    expect(attacker.cookie.startsWith('__Host-edgemail_session=')).toBe(true);
    const planted = `edgemail_session=${attackerToken}`;
    const alone = await whoAmI(planted);
    expect(alone.status).toBe(401);
    expect((await stack.call('GET', '/api/v1/api-keys', { headers: withSession(stack, planted, { 'X-Service-Project-Id': attacker.project.id }) })).status).toBe(401);
    // Beside the victim's own cookie, the planted one is ignored: the victim stays themselves.
    const beside = await whoAmI(`${planted}; ${victim.cookie}`);
    expect(beside.status).toBe(200);
    expect(beside.body.user.id).toBe(victim.user.id);
    // A mutating request with only the planted cookie acts as nobody (401), and the attacker's session is unchanged.
    const put = await stack.call('PUT', '/app/api/session/project', { headers: withSession(stack, planted), body: { project_id: attacker.project.id } });
    expect(put.status).toBe(401);
    expect((await whoAmI(attacker.cookie)).status).toBe(200);
  });

  test('an unknown email and a wrong password get the same 401, open nothing, and are in the trail', async () => {
    const { user } = await consoleUser(stack, admin, PASSWORD, 'refused');
    const unknown = `nobody-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const a = await signIn(stack, { email: unknown, password: PASSWORD });
    const b = await signIn(stack, { email: user.email, password: `${PASSWORD}!` });
    for (const r of [a, b]) {
      expect(r.status).toBe(401);
      expect(r.body).toEqual(INVALID);
      expect(r.headers.get('set-cookie')).toBeNull();
    }
    expect(await sessionCount(user.id)).toBe(0);
    expect((await stack.sql.query('SELECT failed_password_count FROM users WHERE id = $1', [user.id])).rows[0].failed_password_count).toBe(1);
    expect(await securityEvents(stack.sql, unknown)).toMatchObject([{ type: 'auth.login.failed', detail: 'password', status: 401, actor_id: null }]);
    expect(await securityEvents(stack.sql, user.email)).toMatchObject([{ type: 'auth.login.failed', detail: 'password', status: 401, actor_id: user.id }]);
  });

  test('a malformed body is a 400 naming the field; a foreign Origin a 403; nothing is opened', async () => {
    const { user } = await consoleUser(stack, admin, PASSWORD, 'malformed');
    const missing = await stack.call('POST', '/app/api/session', { body: { email: user.email }, headers: { origin: originOf(stack) } });
    expect(missing.status).toBe(400);
    expect(missing.body.fields).toHaveProperty('password');
    const foreign = await stack.call('POST', '/app/api/session', { body: { email: user.email, password: PASSWORD }, headers: { origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.body.error).toMatch(/^cross-origin request refused/);
    expect(await sessionCount(user.id)).toBe(0);
  });

  test('an API key or a platform credential is refused on every /app/api route (403), a right password notwithstanding', async () => {
    const tenant = await consoleUser(stack, admin, PASSWORD, 'keys');
    const { token } = await tenant.key(['*']);
    for (const credential of [token, admin]) {
      const login = await stack.call('POST', '/app/api/session', { token: credential, body: { email: tenant.user.email, password: PASSWORD }, headers: { origin: originOf(stack) } });
      expect(login.status).toBe(403);
      expect(login.body.error).toMatch(/^API keys and platform credentials are not accepted on \/app\/api/);
      expect((await stack.call('GET', '/app/api/session', { token: credential })).status).toBe(403);
    }
    expect(await sessionCount(tenant.user.id)).toBe(0);
  });
});

describe('expiry', () => {
  test('idle: a session unused for longer than console.session_idle_timeout (8 h) is void', async () => {
    const { cookie, user } = await signedIn('idle');
    await stack.sql.query(`UPDATE sessions SET last_seen_at = now() - interval '7 hours 59 minutes' WHERE user_id = $1`, [user.id]);
    expect((await whoAmI(cookie)).status).toBe(200);
    // That request moved last_seen_at forward (after the answer, at most once a minute).
    await eventually(async () => (await stack.sql.query(`SELECT last_seen_at > now() - interval '1 minute' AS fresh FROM sessions WHERE user_id = $1`, [user.id])).rows[0].fresh, (f) => f === true);
    await stack.sql.query(`UPDATE sessions SET last_seen_at = now() - interval '8 hours 1 minute' WHERE user_id = $1`, [user.id]);
    const r = await whoAmI(cookie);
    expect(r.status).toBe(401);
    expect(r.body.error).toBe('invalid or expired session');
  });

  test('absolute: past expires_at the session is void however recently used', async () => {
    const { cookie, user } = await signedIn('absolute');
    const { rows: [s] } = await stack.sql.query(`SELECT expires_at - created_at AS age FROM sessions WHERE user_id = $1`, [user.id]);
    expect(s.age).toMatchObject({ days: 7 });
    await stack.sql.query(`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = $1`, [user.id]);
    expect((await whoAmI(cookie)).status).toBe(401);
  });
});

describe('signing out', () => {
  test('DELETE /app/api/session ends this session only, clears the cookie and records auth.logout; a foreign Origin cannot', async () => {
    const tenant = await signedIn('logout');
    const other = cookieOf((await signIn(stack, { email: tenant.user.email, password: PASSWORD })).headers.get('set-cookie'));
    const foreign = await stack.call('DELETE', '/app/api/session', { headers: { cookie: tenant.cookie, origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect((await whoAmI(tenant.cookie)).status).toBe(200);

    const r = await stack.call('DELETE', '/app/api/session', { headers: withSession(stack, tenant.cookie) });
    expect(r.status).toBe(204);
    expect(r.headers.get('set-cookie')).toBe('__Host-edgemail_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure');
    expect((await whoAmI(tenant.cookie)).status).toBe(401);
    expect((await whoAmI(other)).status).toBe(200);
    await eventually(() => securityEvents(stack.sql, tenant.user.email), (e) => e.some((x) => x.type === 'auth.logout'));
  });

  test('sign-out-all ends every session of the user, and only theirs', async () => {
    const tenant = await signedIn('everywhere');
    const second = cookieOf((await signIn(stack, { email: tenant.user.email, password: PASSWORD })).headers.get('set-cookie'));
    const bystander = await signedIn('bystander');
    const r = await stack.call('POST', '/app/api/session/sign-out-all', { headers: withSession(stack, second) });
    expect(r.status).toBe(204);
    expect((await whoAmI(tenant.cookie)).status).toBe(401);
    expect((await whoAmI(second)).status).toBe(401);
    expect(await sessionCount(tenant.user.id)).toBe(0);
    expect((await whoAmI(bystander.cookie)).status).toBe(200);
    // Signing in again works: only sessions opened before the sign-out are void.
    const again = await signIn(stack, { email: tenant.user.email, password: PASSWORD });
    expect((await whoAmI(cookieOf(again.headers.get('set-cookie')))).status).toBe(200);
  });
});

describe('projects and /api/v1', () => {
  /** A user of the tenant's project with `role`, signed in. */
  async function member(projectId: string, role: 'admin' | 'member') {
    const { body: { user } } = await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: `${role}-${crypto.randomUUID().slice(0, 8)}@example.com` } });
    await stack.sql.query('INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)', [projectId, user.id, role]);
    await stack.sql.query('UPDATE users SET default_project_id = $2 WHERE id = $1', [user.id, projectId]);
    await setPassword(stack.sql, user.id, PASSWORD);
    const r = await signIn(stack, { email: user.email, password: PASSWORD });
    expect(r.status).toBe(200);
    return cookieOf(r.headers.get('set-cookie'));
  }

  test('a member session lists keys, is refused revoking one (403); an admin session revokes; a foreign Origin is refused', async () => {
    const tenant = await consoleUser(stack, admin, PASSWORD, 'roles');
    const victim = await tenant.key(['emails:read']);
    const [memberCookie, adminCookie] = [await member(tenant.project.id, 'member'), await member(tenant.project.id, 'admin')];
    const list = await stack.call('GET', '/api/v1/api-keys', { headers: withSession(stack, memberCookie) });
    expect(list.status).toBe(200);
    expect(list.body.api_keys.map((k: { id: string }) => k.id)).toContain(victim.api_key.id);
    const revoke = `/api/v1/api-keys/${victim.api_key.id}/revoke`;
    const refused = await stack.call('POST', revoke, { headers: withSession(stack, memberCookie) });
    expect(refused.status).toBe(403);
    expect(refused.body.error).toBe('project admin role required');
    const foreign = await stack.call('POST', revoke, { headers: { cookie: adminCookie, origin: 'https://evil.example' } });
    expect(foreign.status).toBe(403);
    expect((await stack.sql.query('SELECT revoked FROM api_keys WHERE id = $1', [victim.api_key.id])).rows[0].revoked).toBe(false);
    const revoked = await stack.call('POST', revoke, { headers: withSession(stack, adminCookie) });
    expect(revoked.status).toBe(200);
    expect(revoked.body.api_key.revoked).toBe(true);
  });

  test('switching the current project: refused for a foreign one; then /api/v1 acts in it without X-Service-Project-Id', async () => {
    const home = await signedIn('home');
    const away = await consoleUser(stack, admin, PASSWORD, 'away');
    const stranger = await consoleUser(stack, admin, PASSWORD, 'stranger');
    await stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'admin')`, [away.project.id, home.user.id]);
    const awayKey = await away.key(['emails:read']);

    for (const projectId of [stranger.project.id, crypto.randomUUID()]) {
      const r = await stack.call('PUT', '/app/api/session/project', { body: { project_id: projectId }, headers: withSession(stack, home.cookie) });
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('not a member of this project');
    }
    const keysOf = async () => (await stack.call('GET', '/api/v1/api-keys', { headers: withSession(stack, home.cookie) })).body.api_keys.map((k: { id: string }) => k.id);
    expect(await keysOf()).not.toContain(awayKey.api_key.id);

    const r = await stack.call('PUT', '/app/api/session/project', { body: { project_id: away.project.id }, headers: withSession(stack, home.cookie) });
    expect(r.status).toBe(200);
    expect(r.body.session.current_project_id).toBe(away.project.id);
    expect(r.body.memberships.map((m: { project_id: string }) => m.project_id).sort()).toEqual([home.project.id, away.project.id].sort());
    expect(await keysOf()).toContain(awayKey.api_key.id);
    // The header still picks another project the user belongs to.
    const header = await stack.call('GET', '/api/v1/api-keys', { headers: withSession(stack, home.cookie, { 'X-Service-Project-Id': home.project.id }) });
    expect(header.body.api_keys.map((k: { id: string }) => k.id)).not.toContain(awayKey.api_key.id);
  });

  test('choosing the default project: refused for a foreign one; a new session starts there, a session that chose one keeps it', async () => {
    const home = await signedIn('default-home');
    const away = await consoleUser(stack, admin, PASSWORD, 'default-away');
    const stranger = await consoleUser(stack, admin, PASSWORD, 'default-stranger');
    await stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'member')`, [away.project.id, home.user.id]);
    const choose = (projectId: string, cookie = home.cookie) =>
      stack.call('PUT', '/app/api/account/default-project', { body: { project_id: projectId }, headers: withSession(stack, cookie) });
    const defaultOf = async () => (await stack.sql.query('SELECT default_project_id FROM users WHERE id = $1', [home.user.id])).rows[0].default_project_id;

    for (const projectId of [stranger.project.id, crypto.randomUUID()]) {
      expect(await choose(projectId)).toMatchObject({ status: 403, body: { error: 'not a member of this project' } });
    }
    expect(await defaultOf()).toBe(home.project.id);

    // A session that chose its project keeps it; the session itself had none chosen, so it follows.
    const chosen = await signIn(stack, { email: home.user.email, password: PASSWORD });
    const chosenCookie = cookieOf(chosen.headers.get('set-cookie'));
    await stack.call('PUT', '/app/api/session/project', { body: { project_id: home.project.id }, headers: withSession(stack, chosenCookie) });
    const r = await choose(away.project.id);
    expect(r.status).toBe(200);
    expect(r.body.user.default_project_id).toBe(away.project.id);
    expect(r.body.session.current_project_id).toBe(away.project.id);
    expect(await defaultOf()).toBe(away.project.id);
    const kept = await stack.call('GET', '/app/api/session', { headers: withSession(stack, chosenCookie) });
    expect(kept.body.session.current_project_id).toBe(home.project.id);
    const fresh = await signIn(stack, { email: home.user.email, password: PASSWORD });
    expect(fresh.body.session.current_project_id).toBe(away.project.id);
  });
});
