// A project's SSO policy (docs/console.md, "SSO policy"): every member reads
// it; only the owner, signed in through single sign-on, requires it. Admin and
// member sessions, every API key (even `*`) and the platform credential are
// refused, and a refusal changes nothing. Once required, sessions not opened
// through single sign-on cannot act in the project, however they name it;
// keys are not affected, and an open event stream of such a session ends.
// The policy names the identity providers it accepts: a session opened
// through another provider is refused exactly as a password session is.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { consoleUser, cookieOf, setPassword, signIn, withSession } from './support/console.js';
import { eventually } from './support/wait.js';
import { openSse } from './support/sse.js';

const PASSWORD = 'correct horse battery staple';
const SSO_REQUIRED = 'this project requires single sign-on: sign in through your identity provider to use it';

let stack: TestStack;
let admin: string;
let tenant: SeededProject;
/** Two identity providers (rows only: these tests open their sessions directly, test/console-oidc*.test.ts sign in for real). */
let providerA: string;
let providerB: string;
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
  stack = await startTestStack({ settings: { SERVICE_CONSOLE_EVENTS_SESSION_CHECK: '500ms' } });
  admin = await platformToken(stack);
  tenant = await consoleUser(stack, admin, PASSWORD, 'sso');
  const provider = async (name: string) => (await stack.sql.query(
    `INSERT INTO identity_providers (name, issuer, client_id, client_secret_sealed, allowed_domains) VALUES ($1, $2, 'edgemail', 'sealed', '{example.com}') RETURNING id`,
    [name, `https://${name}.example`])).rows[0].id as string;
  providerA = await provider('idp-a');
  providerB = await provider('idp-b');
  cookies.owner = await signedIn(tenant.user.email);
  cookies.admin = await memberSession('admin');
  cookies.member = await memberSession('member');
});
afterAll(async () => { await stack?.stop(); });

const stored = async () => (await stack.sql.query('SELECT sso_required FROM projects WHERE id = $1', [tenant.project.id])).rows[0].sso_required as boolean;
const put = (required: boolean, who: { cookie?: string; token?: string }, providerIds?: unknown) => stack.call('PUT', '/api/v1/project/sso', {
  body: { required, ...(providerIds === undefined ? {} : { provider_ids: providerIds }) },
  ...(who.cookie ? { headers: withSession(stack, who.cookie) } : { token: who.token, headers: { 'X-Service-Project-Id': tenant.project.id } }),
});
const get = (cookie: string) => stack.call('GET', '/api/v1/project/sso', { headers: withSession(stack, cookie) });

describe('the SSO policy', () => {
  test('every member reads it', async () => {
    for (const cookie of Object.values(cookies)) expect(await get(cookie)).toMatchObject({ status: 200, body: { required: false } });
  });

  test('the owner\'s password session cannot require it: 409, nothing changed (it would lock itself out)', async () => {
    const r = await put(true, { cookie: cookies.owner });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/^sign in through single sign-on before requiring it/);
    expect(await stored()).toBe(false);
  });

  test('the owner\'s single sign-on session changes it, and back', async () => {
    const ownerSso = await sessionCookie(stack, tenant.user.id, 'oidc', providerA);
    expect(await put(true, { cookie: ownerSso })).toMatchObject({ status: 200, body: { required: true } });
    expect(await stored()).toBe(true);
    expect((await get(ownerSso)).body).toEqual({ required: true, provider_ids: [providerA] });
    // Now in force: a member's password session cannot even read it.
    expect(await get(cookies.member)).toMatchObject({ status: 403, body: { error: SSO_REQUIRED } });
    // Project activity, written after the answer.
    const events = () => stack.sql.query(`SELECT type, category, actor_id FROM audit_events WHERE project_id = $1 AND type = 'sso_policy.updated'`, [tenant.project.id]);
    expect((await eventually(events, (r) => r.rows.length > 0)).rows).toEqual([{ type: 'sso_policy.updated', category: 'project', actor_id: tenant.user.id }]);
    expect(await put(false, { cookie: ownerSso })).toMatchObject({ status: 200, body: { required: false } });
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

describe('enforcement: a project that requires single sign-on', () => {
  let other: SeededProject;
  let ownerSso: string;
  const setRequired = (required: boolean) => stack.sql.query('UPDATE projects SET sso_required = $2 WHERE id = $1', [tenant.project.id, required]);
  const domains = (cookie: string, header?: string) =>
    stack.call('GET', '/api/v1/domains', { headers: withSession(stack, cookie, header ? { 'X-Service-Project-Id': header } : {}) });

  beforeAll(async () => {
    // The owner is also a member of a project without the policy.
    other = await seedProject(stack, admin, 'no-sso');
    await stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'member')`, [other.project.id, tenant.user.id]);
    ownerSso = await sessionCookie(stack, tenant.user.id, 'oidc', providerA);
    expect(await put(true, { cookie: ownerSso })).toMatchObject({ status: 200, body: { required: true } });
  });
  afterAll(async () => { await setRequired(false); });

  test('password and passkey sessions are refused, by header, current project or default project', async () => {
    const passkey = await sessionCookie(stack, tenant.user.id, 'passkey');
    for (const cookie of [cookies.owner, cookies.member, passkey]) {
      for (const header of [tenant.project.id, undefined]) {
        const r = await domains(cookie, header);
        expect(r.status, `${header}`).toBe(403);
        expect(r.body).toEqual({ error: SSO_REQUIRED });
      }
    }
    // Writes too, and nothing changed.
    const r = await stack.call('POST', '/api/v1/domains', { body: { name: 'blocked.example' }, headers: withSession(stack, cookies.owner) });
    expect(r).toMatchObject({ status: 403, body: { error: SSO_REQUIRED } });
    expect((await stack.sql.query('SELECT 1 FROM domains WHERE name = $1', ['blocked.example'])).rows).toHaveLength(0);
  });

  test('a single sign-on session is allowed; the password session still works in a project without the policy', async () => {
    expect((await domains(ownerSso)).status).toBe(200);
    expect((await domains(await sessionCookie(stack, tenant.user.id, 'oidc', providerA), tenant.project.id)).status).toBe(200);
    expect((await domains(cookies.owner, other.project.id)).status).toBe(200);
    // A route that needs no project answers, unless the blocked project is asked for by name.
    expect((await stack.call('GET', '/api/v1/permissions', { headers: withSession(stack, cookies.owner) })).status).toBe(200);
  });

  test('the console: who-am-i answers and shows the policy; switching into the project is refused', async () => {
    const me = await stack.call('GET', '/app/api/session', { headers: withSession(stack, cookies.owner) });
    expect(me.status).toBe(200);
    const byProject = Object.fromEntries(me.body.memberships.map((m: { project_id: string; sso_required: boolean }) => [m.project_id, m.sso_required]));
    expect(byProject).toEqual({ [tenant.project.id]: true, [other.project.id]: false });

    const into = (cookie: string, project: string) => stack.call('PUT', '/app/api/session/project', { body: { project_id: project }, headers: withSession(stack, cookie) });
    expect((await into(cookies.owner, other.project.id)).status).toBe(200);
    expect(await into(cookies.owner, tenant.project.id)).toMatchObject({ status: 403, body: { error: SSO_REQUIRED } });
    const { rows } = await stack.sql.query('SELECT current_project_id FROM sessions WHERE method = $1 AND user_id = $2 AND current_project_id IS NOT NULL', ['password', tenant.user.id]);
    expect(rows.map((r) => r.current_project_id)).toEqual([other.project.id]);
    // A project the user is not in stays "not a member".
    expect((await into(cookies.member, other.project.id)).body).toEqual({ error: 'not a member of this project' });
    expect((await into(ownerSso, tenant.project.id)).status).toBe(200);
  });

  test('the event stream: refused to a password session; an open one ends when the project comes to require SSO', async () => {
    const follow = (cookie: string) => openSse(`${stack.url}/app/api/events`, { cookie, 'X-Service-Project-Id': tenant.project.id });
    const refused = await follow(cookies.member);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body!).error).toBe(SSO_REQUIRED);

    await setRequired(false);
    const password = await follow(cookies.member);
    const sso = await follow(ownerSso);
    expect([password.status, sso.status]).toEqual([200, 200]);
    await setRequired(true);
    await password.ended;
    expect(password.events.at(-1)?.event).toBe('end');
    expect(sso.events.some((e) => e.event === 'end')).toBe(false);
    sso.close();
  });

  test('API keys are not affected', async () => {
    const { token } = await tenant.key(['domains:read']);
    expect((await stack.call('GET', '/api/v1/domains', { token })).status).toBe(200);
  });

  test('turned off from a single sign-on session, password sessions are back', async () => {
    expect(await put(false, { cookie: ownerSso })).toMatchObject({ status: 200, body: { required: false } });
    expect((await domains(cookies.owner, tenant.project.id)).status).toBe(200);
    expect(await put(true, { cookie: ownerSso })).toMatchObject({ status: 200 });
  });
});

describe('the providers the policy names', () => {
  let ownerA: string;
  let ownerB: string;
  const storedPolicy = async () => (await stack.sql.query('SELECT sso_required, sso_provider_ids FROM projects WHERE id = $1', [tenant.project.id])).rows[0];
  const domains = (cookie: string, header?: string) =>
    stack.call('GET', '/api/v1/domains', { headers: withSession(stack, cookie, header ? { 'X-Service-Project-Id': header } : {}) });
  const follow = (cookie: string) => openSse(`${stack.url}/app/api/events`, { cookie, 'X-Service-Project-Id': tenant.project.id });

  beforeAll(async () => {
    await stack.sql.query(`UPDATE projects SET sso_required = false, sso_provider_ids = '{}' WHERE id = $1`, [tenant.project.id]);
    ownerA = await sessionCookie(stack, tenant.user.id, 'oidc', providerA);
    ownerB = await sessionCookie(stack, tenant.user.id, 'oidc', providerB);
  });
  afterAll(async () => { await stack.sql.query('UPDATE projects SET sso_required = false WHERE id = $1', [tenant.project.id]); });

  test('unknown, disabled or malformed provider ids: 400 naming provider_ids, nothing changed', async () => {
    const disabled = (await stack.sql.query(
      `INSERT INTO identity_providers (name, issuer, client_id, client_secret_sealed, enabled) VALUES ('idp-off', 'https://idp-off.example', 'edgemail', 'sealed', false) RETURNING id`)).rows[0].id;
    const before = await storedPolicy();
    for (const ids of [[providerA, crypto.randomUUID()], [disabled]]) {
      const r = await put(true, { cookie: ownerA }, ids);
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(r.body.fields.provider_ids).toBe(`unknown or disabled identity provider: ${ids.at(-1)}`);
    }
    const malformed = await put(true, { cookie: ownerA }, ['not-a-uuid']);
    expect(malformed.status).toBe(400);
    expect(Object.keys(malformed.body.fields)[0]).toMatch(/^provider_ids/);
    expect(await storedPolicy()).toEqual(before);
  });

  test('a list without the requesting session\'s own provider: 409, nothing changed (it would lock itself out)', async () => {
    const r = await put(true, { cookie: ownerA }, [providerB]);
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/^provider_ids must include the identity provider this session signed in through/);
    expect(await storedPolicy()).toEqual({ sso_required: false, sso_provider_ids: [] });
  });

  test('turned on without provider_ids: the requesting session\'s provider; GET shows it', async () => {
    expect(await put(true, { cookie: ownerA })).toMatchObject({ status: 200, body: { required: true, provider_ids: [providerA] } });
    expect((await get(ownerA)).body).toEqual({ required: true, provider_ids: [providerA] });
  });

  test('a session of another provider is refused as a password session is: /api/v1 (header, current, default project), project switch, event stream', async () => {
    for (const header of [tenant.project.id, undefined]) {
      expect(await domains(ownerB, header)).toMatchObject({ status: 403, body: { error: SSO_REQUIRED } });
      expect((await domains(ownerA, header)).status).toBe(200);
    }
    const r = await stack.call('POST', '/api/v1/domains', { body: { name: 'via-b.example' }, headers: withSession(stack, ownerB) });
    expect(r).toMatchObject({ status: 403, body: { error: SSO_REQUIRED } });
    expect((await stack.sql.query('SELECT 1 FROM domains WHERE name = $1', ['via-b.example'])).rows).toHaveLength(0);
    // Nor can it change the policy to let itself in.
    expect(await put(true, { cookie: ownerB }, [providerA, providerB])).toMatchObject({ status: 403, body: { error: SSO_REQUIRED } });

    const into = (cookie: string) => stack.call('PUT', '/app/api/session/project', { body: { project_id: tenant.project.id }, headers: withSession(stack, cookie) });
    expect(await into(ownerB)).toMatchObject({ status: 403, body: { error: SSO_REQUIRED } });
    expect((await into(ownerA)).status).toBe(200);

    const refused = await follow(ownerB);
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body!).error).toBe(SSO_REQUIRED);
    // who-am-i still lists the membership with its policy.
    const me = await stack.call('GET', '/app/api/session', { headers: withSession(stack, ownerB) });
    expect(me.body.memberships.find((m: { project_id: string }) => m.project_id === tenant.project.id)).toMatchObject({ sso_required: true });
  });

  test('naming both lets both in; dropping one ends its open event stream', async () => {
    expect(await put(true, { cookie: ownerA }, [providerA, providerB])).toMatchObject({ status: 200, body: { provider_ids: [providerA, providerB] } });
    expect((await domains(ownerB, tenant.project.id)).status).toBe(200);
    const viaA = await follow(ownerA);
    const viaB = await follow(ownerB);
    expect([viaA.status, viaB.status]).toEqual([200, 200]);
    expect(await put(true, { cookie: ownerA }, [providerA])).toMatchObject({ status: 200, body: { provider_ids: [providerA] } });
    await viaB.ended;
    expect(viaB.events.at(-1)?.event).toBe('end');
    expect(viaA.events.some((e) => e.event === 'end')).toBe(false);
    viaA.close();
    expect((await domains(ownerB, tenant.project.id)).status).toBe(403);
  });

  test('a deleted provider drops out of the list; its sessions are gone', async () => {
    const gone = (await stack.sql.query(
      `INSERT INTO identity_providers (name, issuer, client_id, client_secret_sealed) VALUES ('idp-gone', 'https://idp-gone.example', 'edgemail', 'sealed') RETURNING id`)).rows[0].id;
    const ownerGone = await sessionCookie(stack, tenant.user.id, 'oidc', gone);
    expect(await put(true, { cookie: ownerA }, [gone, providerA])).toMatchObject({ status: 200, body: { provider_ids: [gone, providerA] } });
    expect((await domains(ownerGone, tenant.project.id)).status).toBe(200);
    expect((await stack.call('DELETE', `/api/v1/admin/identity-providers/${gone}`, { token: admin })).status).toBe(204);
    expect((await domains(ownerGone, tenant.project.id)).status).toBe(401);
    expect((await get(ownerA)).body).toEqual({ required: true, provider_ids: [providerA] });
  });
});
