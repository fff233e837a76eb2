// The platform admin's identity providers (docs/sso.md "Identity providers"):
// create, list, get, change and delete against a real OpenID Connect provider
// on loopback (its discovery is checked at creation and when the issuer
// changes); every refusal names its field and changes nothing; the client
// secret is sealed in the row and never shown in an answer or a log line;
// deleting takes the user identities and leaves users and sessions; the
// security trail records each write; project keys and sessions are refused.
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { unseal } from '../edge/src/crypto/seal.js';
import { CLIENT_SECRET_CONTEXT } from '../edge/src/services/identity-providers/client-secret.js';
import { platformToken, seedProject, sessionCookie, startTestStack, type Reply, type SeededProject, type TestStack } from './support/stack.js';
import { startOidcProvider, type TestOidcProvider } from './support/oidc-provider.js';
import { eventually } from './support/wait.js';

const PUBLIC_URL = 'https://mail.example.test';
const REDIRECT_URI = `${PUBLIC_URL}/app/api/session/oidc/callback`;
const SECRET = 'first client secret 7f3a9c';
const ROTATED = 'rotated client secret 0b1d44';
const CLIENT = { client_id: 'edgemail', client_secret: SECRET, redirect_uris: [REDIRECT_URI] };
const PATH = '/api/v1/admin/identity-providers';
const FIELDS = ['allowed_domains', 'client_id', 'created_at', 'default_project_id', 'default_role', 'enabled', 'id', 'issuer', 'name', 'redirect_uri', 'updated_at'];

let stack: TestStack;
let admin: string;
let idp: TestOidcProvider;
let tenant: SeededProject;
let unusedPort: number;
/** Every answer of this file, to show the secrets never appear in one. */
const answers: string[] = [];

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  [idp, stack, unusedPort] = await Promise.all([
    startOidcProvider({ clients: [CLIENT], accounts: [] }),
    startTestStack({ settings: { SERVICE_SERVER_PUBLIC_URL: PUBLIC_URL }, captureLogs: true }),
    freePort(),
  ]);
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin, 'sso-default');
});
afterAll(async () => {
  await stack?.stop();
  await idp?.close();
});

async function call(method: string, path: string, body?: unknown, token = admin): Promise<Reply> {
  const r = await stack.call(method, path, { token, body });
  answers.push(JSON.stringify(r.body ?? null));
  return r;
}
const create = (fields: Record<string, unknown> = {}) => call('POST', PATH, {
  name: `Acme ${crypto.randomUUID().slice(0, 8)}`, issuer: idp.issuer, client_id: CLIENT.client_id, client_secret: SECRET, ...fields,
});
const patch = (id: string, body: unknown) => call('PATCH', `${PATH}/${id}`, body);
const rows = async () => (await stack.sql.query('SELECT * FROM identity_providers ORDER BY id')).rows;
const row = async (id: string) => (await stack.sql.query('SELECT * FROM identity_providers WHERE id = $1', [id])).rows[0];

describe('the provider\'s life', () => {
  test('create, get, list, change, rotate the secret, delete', async () => {
    const created = await create({
      name: 'Acme SSO',
      allowed_domains: ['Acme.Example.', 'acme.example', ' eu.acme.example '],
      default_project_id: tenant.project.id,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const provider = created.body.identity_provider;
    expect(Object.keys(provider).sort()).toEqual(FIELDS);
    expect(provider).toMatchObject({
      name: 'Acme SSO',
      issuer: idp.issuer,
      client_id: 'edgemail',
      allowed_domains: ['acme.example', 'eu.acme.example'],
      default_project_id: tenant.project.id,
      default_role: 'member',
      enabled: true,
      redirect_uri: REDIRECT_URI,
    });

    // Sealed in the row under its own context; the plain secret is nowhere in it.
    const stored = await row(provider.id);
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    expect(stored.client_secret_sealed).toMatch(/^v1\./);
    expect(await unseal(stored.client_secret_sealed, stack.encryptionKey, CLIENT_SECRET_CONTEXT)).toBe(SECRET);
    await expect(unseal(stored.client_secret_sealed, stack.encryptionKey)).rejects.toThrow();

    const got = await call('GET', `${PATH}/${provider.id}`);
    expect(got.status).toBe(200);
    expect(got.body.identity_provider).toEqual(provider);
    const listed = await call('GET', PATH);
    expect(listed.status).toBe(200);
    expect(listed.body.identity_providers).toContainEqual(provider);

    // A subset changes; the rest stays.
    const changed = await patch(provider.id, { enabled: false, default_role: 'admin', allowed_domains: [] });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body.identity_provider).toEqual({
      ...provider, enabled: false, default_role: 'admin', allowed_domains: [], updated_at: changed.body.identity_provider.updated_at,
    });
    expect(Date.parse(changed.body.identity_provider.updated_at)).toBeGreaterThan(Date.parse(provider.updated_at));
    const cleared = await patch(provider.id, { default_project_id: null, name: 'Acme SSO (EU)' });
    expect(cleared.body.identity_provider).toMatchObject({ default_project_id: null, name: 'Acme SSO (EU)', enabled: false });

    // A new secret replaces the sealed one.
    const rotated = await patch(provider.id, { client_secret: ROTATED });
    expect(rotated.status).toBe(200);
    const after = await row(provider.id);
    expect(after.client_secret_sealed).not.toBe(stored.client_secret_sealed);
    expect(await unseal(after.client_secret_sealed, stack.encryptionKey, CLIENT_SECRET_CONTEXT)).toBe(ROTATED);
    expect(JSON.stringify(after)).not.toContain(ROTATED);

    // Deleting takes the user identities; the user and their session stay.
    const user = tenant.user.id;
    const cookie = await sessionCookie(stack, user);
    await stack.sql.query('INSERT INTO user_identities (provider_id, subject, user_id) VALUES ($1, $2, $3)', [provider.id, 'bob-1', user]);
    const sessionsBefore = (await stack.sql.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [user])).rows[0].n;
    const deleted = await call('DELETE', `${PATH}/${provider.id}`);
    expect(deleted.status).toBe(204);
    expect((await call('GET', `${PATH}/${provider.id}`)).status).toBe(404);
    expect((await call('DELETE', `${PATH}/${provider.id}`)).status).toBe(404);
    expect((await stack.sql.query('SELECT * FROM user_identities WHERE provider_id = $1', [provider.id])).rows).toEqual([]);
    expect((await stack.sql.query('SELECT id FROM users WHERE id = $1', [user])).rows).toHaveLength(1);
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM sessions WHERE user_id = $1', [user])).rows[0].n).toBe(sessionsBefore);
    expect((await stack.call('GET', '/app/api/session', { headers: { cookie } })).status).toBe(200);

    // The security trail has each write, by the platform credential, after the answer.
    const trail = () => stack.sql.query(
      'SELECT type, category, project_id, status, path, actor_email FROM audit_events WHERE path = ANY($1) ORDER BY created_at, id',
      [[PATH, `${PATH}/${provider.id}`]]).then((r) => r.rows);
    const events = await eventually(trail, (r) => r.some((e) => e.type === 'identityprovider.deleted'));
    expect(events.filter((e) => e.path !== PATH).map((e) => [e.type, e.status])).toEqual([
      ['identityprovider.updated', 200], ['identityprovider.updated', 200], ['identityprovider.updated', 200], ['identityprovider.deleted', 204],
    ]);
    expect(events.find((e) => e.path === PATH)).toMatchObject({ type: 'identityprovider.created', status: 201 });
    for (const e of events) expect(e).toMatchObject({ category: 'security', project_id: null, actor_email: 'admin api key ops' });
  });

  test('defaults: no domains, no project, member, enabled', async () => {
    const r = await create();
    expect(r.status).toBe(201);
    expect(r.body.identity_provider).toMatchObject({ allowed_domains: [], default_project_id: null, default_role: 'member', enabled: true });
  });
});

describe('refusals change nothing', () => {
  const long = (n: number) => 'x'.repeat(n);
  const domains = (n: number) => Array.from({ length: n }, (_, i) => `d${i}.example`);
  const unknownProject = '0b9b7c1e-4a8a-4c55-9d9f-1c3f1e0d2a11';

  const createRefusals: [string, () => Record<string, unknown>, string, RegExp][] = [
    ['no name', () => ({ name: undefined }), 'name', /required/],
    ['an empty name', () => ({ name: '   ' }), 'name', /must not be empty/],
    ['a name of 101 characters', () => ({ name: long(101) }), 'name', /at most 100/],
    ['no issuer', () => ({ issuer: undefined }), 'issuer', /required/],
    ['an issuer over http on a public host', () => ({ issuer: 'http://idp.example.com' }), 'issuer', /https.*loopback/],
    ['an issuer that is no URL', () => ({ issuer: 'idp.example.com' }), 'issuer', /must be an https URL/],
    ['an issuer with credentials', () => ({ issuer: 'https://u:p@idp.example.com' }), 'issuer', /user name or password/],
    ['an issuer with a query', () => ({ issuer: 'https://idp.example.com/?tenant=1' }), 'issuer', /query or fragment/],
    ['an issuer with a fragment', () => ({ issuer: 'https://idp.example.com/#x' }), 'issuer', /query or fragment/],
    ['an issuer nobody answers on', () => ({ issuer: `http://127.0.0.1:${unusedPort}` }), 'issuer', /discovery of http:\/\/127\.0\.0\.1:\d+ failed/],
    // oauth4webapi alone would take it (it compares parsed URLs); ID tokens carry the provider's own spelling.
    ['an issuer spelled otherwise than its discovery names it (trailing slash)', () => ({ issuer: `${idp.issuer}/` }), 'issuer', /discovery of http:\/\/127\.0\.0\.1:\d+\/ names the issuer http:\/\/127\.0\.0\.1:\d+: write it exactly/],
    ['an issuer path under the provider\'s', () => ({ issuer: `${idp.issuer}/tenant` }), 'issuer', /discovery of .* failed/],
    ['no client_id', () => ({ client_id: undefined }), 'client_id', /required/],
    ['a client_id of 256 characters', () => ({ client_id: long(256) }), 'client_id', /at most 255/],
    ['no client_secret', () => ({ client_secret: undefined }), 'client_secret', /required/],
    ['an empty client_secret', () => ({ client_secret: '' }), 'client_secret', /must not be empty/],
    ['a client_secret of 1001 characters', () => ({ client_secret: long(1001) }), 'client_secret', /at most 1000/],
    ['101 allowed domains', () => ({ allowed_domains: domains(101) }), 'allowed_domains', /at most 100/],
    ['an address as a domain', () => ({ allowed_domains: ['acme.example', 'bob@acme.example'] }), 'allowed_domains.1', /./],
    ['a single-label domain', () => ({ allowed_domains: ['localhost'] }), 'allowed_domains.0', /./],
    ['domains as a string', () => ({ allowed_domains: 'acme.example' }), 'allowed_domains', /array/],
    ['a default project that does not exist', () => ({ default_project_id: unknownProject }), 'default_project_id', new RegExp(`no project ${unknownProject}`)],
    ['a default project that is no id', () => ({ default_project_id: 'acme' }), 'default_project_id', /UUID/],
    ['owner as the default role', () => ({ default_role: 'owner' }), 'default_role', /stranger's first sign-in must not own a project/],
    ['an unknown role', () => ({ default_role: 'root' }), 'default_role', /member or admin/],
    ['enabled as text', () => ({ enabled: 'yes' }), 'enabled', /true or false/],
    ['an unknown field', () => ({ scopes: 'openid' }), 'json', /scopes/],
  ];

  test.each(createRefusals)('create: %s', async (_, fields, field, message) => {
    const before = await rows();
    const r = await create(fields()); // a field set to undefined is left out of the JSON
    expect(r.status, JSON.stringify(r.body)).toBe(400);
    expect(r.body.error).toMatch(new RegExp(`^invalid request body: ${field === 'json' ? '' : `${field.replace('.', '\\.')}: `}`));
    expect(r.body.error).toMatch(message);
    if (field !== 'json') expect(Object.keys(r.body.fields)).toEqual([field]);
    expect(await rows()).toEqual(before);
  });

  test('create: a taken name is 409 naming it', async () => {
    expect((await create({ name: 'Taken' })).status).toBe(201);
    const before = await rows();
    const r = await create({ name: 'Taken', issuer: idp.issuer });
    expect(r.status).toBe(409);
    expect(r.body).toEqual({ error: 'an identity provider named "Taken" already exists' });
    expect(await rows()).toEqual(before);
  });

  test('change: each refusal leaves the row as it was', async () => {
    const { body: { identity_provider: provider } } = await create({ name: 'Unchanged', allowed_domains: ['acme.example'] });
    await create({ name: 'Other' });
    const before = await row(provider.id);
    const refusals: [unknown, number, RegExp][] = [
      [{}, 400, /give at least one field/],
      [{ name: 'Other' }, 409, /an identity provider named "Other" already exists/],
      [{ issuer: `http://127.0.0.1:${unusedPort}`, enabled: false }, 400, /^invalid request body: issuer: discovery of .* failed/],
      [{ issuer: `${idp.issuer}/` }, 400, /^invalid request body: issuer: discovery of .* names the issuer /],
      [{ issuer: 'http://idp.example.com' }, 400, /^invalid request body: issuer: .*https/],
      [{ default_role: 'owner', name: 'Renamed' }, 400, /^invalid request body: default_role: owner cannot be given/],
      [{ default_project_id: unknownProject }, 400, /^invalid request body: default_project_id: no project/],
      [{ allowed_domains: ['not a domain'] }, 400, /^invalid request body: allowed_domains\.0: /],
      [{ client_secret: '' }, 400, /^invalid request body: client_secret: must not be empty/],
      [{ name: null }, 400, /^invalid request body: name: /],
      [{ enabled: null }, 400, /^invalid request body: enabled: /],
    ];
    for (const [body, status, message] of refusals) {
      const r = await patch(provider.id, body);
      expect([r.status, r.body.error], JSON.stringify(body)).toEqual([status, expect.stringMatching(message)]);
      expect(await row(provider.id)).toEqual(before);
    }
    const unknown = await patch(unknownProject, { enabled: false });
    expect(unknown).toMatchObject({ status: 404, body: { error: 'identity provider not found' } });
    // The same issuer again is no change (no discovery needed); a valid one is taken.
    expect((await patch(provider.id, { issuer: provider.issuer })).status).toBe(200);
  });
});

describe('who may', () => {
  test('a project key (even *) and a console session are refused on every route, and nothing changes', async () => {
    const { body: { identity_provider: provider } } = await create({ name: 'Guarded' });
    const before = await rows();
    const { token } = await tenant.key(['*']);
    const cookie = await sessionCookie(stack, tenant.user.id);
    const attempts: [string, string, unknown][] = [
      ['GET', PATH, undefined],
      ['POST', PATH, { name: 'By key', issuer: idp.issuer, client_id: 'x', client_secret: 'y' }],
      ['GET', `${PATH}/${provider.id}`, undefined],
      ['PATCH', `${PATH}/${provider.id}`, { enabled: false }],
      ['DELETE', `${PATH}/${provider.id}`, undefined],
    ];
    for (const [method, path, body] of attempts) {
      const byKey = await stack.call(method, path, { token, body });
      expect([method, path, byKey.status, byKey.body]).toEqual([method, path, 403, { error: 'admin privileges required' }]);
      const bySession = await stack.call(method, path, { body, headers: { cookie, origin: new URL(stack.url).origin } });
      expect([method, path, bySession.status, bySession.body]).toEqual([method, path, 403, { error: 'admin privileges required' }]);
    }
    expect(await rows()).toEqual(before);
  });
});

describe('the secret', () => {
  test('never appears in an answer or a log line, and no row holds it in plain text', async () => {
    expect(answers.length).toBeGreaterThan(40);
    for (const text of answers) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(ROTATED);
    }
    const logs = stack.logs().map((l) => l.message).join('\n');
    expect(logs).not.toContain(SECRET);
    expect(logs).not.toContain(ROTATED);
    const all = JSON.stringify(await rows());
    expect(all).not.toContain(SECRET);
    expect(all).not.toContain(ROTATED);
  });
});
