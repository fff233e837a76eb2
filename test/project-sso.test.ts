// A project's SSO policy (docs/console.md, "SSO policy"): every member reads
// it; only the owner, signed in through the real sign-in route, changes it.
// Admin and member sessions, every API key (even `*`) and the platform
// credential are refused, and a refusal changes nothing.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { consoleUser, cookieOf, setPassword, signIn, withSession } from './support/console.js';
import { eventually } from './support/wait.js';

const PASSWORD = 'correct horse battery staple';

let stack: TestStack;
let admin: string;
let tenant: SeededProject;
const cookies: Record<'owner' | 'admin' | 'member', string> = { owner: '', admin: '', member: '' };

async function signedIn(email: string): Promise<string> {
  const r = await signIn(stack, { email, password: PASSWORD });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return cookieOf(r.headers.get('set-cookie'));
}

/** A user with `role` in the tenant's project, signed in. */
async function memberSession(role: 'admin' | 'member'): Promise<string> {
  const { body: { user } } = await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: `${role}-${crypto.randomUUID().slice(0, 8)}@example.com` } });
  await stack.sql.query('INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)', [tenant.project.id, user.id, role]);
  await stack.sql.query('UPDATE users SET default_project_id = $2 WHERE id = $1', [user.id, tenant.project.id]);
  await setPassword(stack.sql, user.id, PASSWORD);
  return signedIn(user.email);
}

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
  tenant = await consoleUser(stack, admin, PASSWORD, 'sso');
  cookies.owner = await signedIn(tenant.user.email);
  cookies.admin = await memberSession('admin');
  cookies.member = await memberSession('member');
});
afterAll(async () => { await stack?.stop(); });

const stored = async () => (await stack.sql.query('SELECT sso_required FROM projects WHERE id = $1', [tenant.project.id])).rows[0].sso_required as boolean;
const put = (required: boolean, who: { cookie?: string; token?: string }) => stack.call('PUT', '/api/v1/project/sso', {
  body: { required },
  ...(who.cookie ? { headers: withSession(stack, who.cookie) } : { token: who.token, headers: { 'X-Service-Project-Id': tenant.project.id } }),
});
const get = (cookie: string) => stack.call('GET', '/api/v1/project/sso', { headers: withSession(stack, cookie) });

describe('the SSO policy', () => {
  test('every member reads it', async () => {
    for (const cookie of Object.values(cookies)) expect(await get(cookie)).toMatchObject({ status: 200, body: { required: false } });
  });

  test('the owner\'s session changes it, and back', async () => {
    expect(await put(true, { cookie: cookies.owner })).toMatchObject({ status: 200, body: { required: true } });
    expect(await stored()).toBe(true);
    expect((await get(cookies.member)).body).toEqual({ required: true });
    // Project activity, written after the answer.
    const events = () => stack.sql.query(`SELECT type, category, actor_id FROM audit_events WHERE project_id = $1 AND type = 'sso_policy.updated'`, [tenant.project.id]);
    expect((await eventually(events, (r) => r.rows.length > 0)).rows).toEqual([{ type: 'sso_policy.updated', category: 'project', actor_id: tenant.user.id }]);
    expect(await put(false, { cookie: cookies.owner })).toMatchObject({ status: 200, body: { required: false } });
    expect(await stored()).toBe(false);
  });

  test('admin and member sessions are refused, nothing changed', async () => {
    for (const cookie of [cookies.admin, cookies.member]) {
      const r = await put(true, { cookie });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ error: 'project owner role required' });
    }
    expect(await stored()).toBe(false);
  });

  test('every API key, even *, is refused', async () => {
    for (const permissions of [['*'], ['members:read', 'members:write']]) {
      const { token } = await tenant.key(permissions);
      const r = await put(true, { token });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ error: 'permission sso:write is not available to API keys' });
    }
    expect(await stored()).toBe(false);
  });

  test('the platform credential is refused too: the owner decides', async () => {
    const r = await put(true, { token: admin });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatch(/only the project owner, signed in, may change the SSO policy/);
    expect(await stored()).toBe(false);
  });

  test('a cookie request from a foreign Origin is refused', async () => {
    const r = await stack.call('PUT', '/api/v1/project/sso', { body: { required: true }, headers: { cookie: cookies.owner, origin: 'https://evil.example' } });
    expect(r.status).toBe(403);
    expect(await stored()).toBe(false);
  });
});
