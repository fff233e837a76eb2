// The permission catalogue and how a key's list is judged (spec
// "Authentication" items 4-6 and the 403 rows of the errors table).
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type TestStack } from './support/stack.js';

let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin);
});
afterAll(async () => { await stack?.stop(); });

const keyCount = async () => Number((await stack.sql.query('SELECT count(*) FROM api_keys')).rows[0].count);
const create = (body: unknown) => stack.call('POST', '/api/v1/api-keys', { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id }, body });

describe('GET /api/v1/permissions', () => {
  test('lists every resource the spec names, to any credential', async () => {
    const { token } = await tenant.key([]);
    const r = await stack.call('GET', '/api/v1/permissions', { token });
    expect(r.status).toBe(200);
    const resources = r.body.resources.map((x: { resource: string }) => x.resource);
    for (const name of ['emails', 'suppressions', 'domains', 'analytics', 'bounces', 'webhooks', 'data', 'relay', 'apikeys', 'sandbox', 'inbound', 'templates']) {
      expect(resources).toContain(name);
    }
    expect(r.body.permissions).toContain('data:read');
    expect(r.body.permissions).toContain('relay:write');
    expect(r.body.permissions).not.toContain('project:delete');
    expect(r.body.wildcard).toBe('*');
  });

  test('needs a credential', async () => {
    expect((await stack.call('GET', '/api/v1/permissions')).status).toBe(401);
  });
});

// Spec "Authentication" item 3, for every route the API description declares,
// so a route added later cannot escape it.
describe('a platform credential without X-Service-Project-Id', () => {
  test('is 400 on every non-admin route, and changes nothing', async () => {
    const { body: doc } = await stack.call('GET', '/api/v1/openapi.json');
    const routes = Object.entries(doc.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => !path.startsWith('/api/v1/admin/'))
      .flatMap(([path, ops]) => Object.keys(ops).map((method) => [method.toUpperCase(), path] as const));
    expect(routes).toContainEqual(['GET', '/api/v1/permissions']);
    const projectsBefore = Number((await stack.sql.query('SELECT count(*) FROM projects')).rows[0].count);
    const keysBefore = await keyCount();
    for (const [method, path] of routes) {
      const concrete = path.replace(/\{[^}]+\}/g, crypto.randomUUID());
      const r = await stack.call(method, concrete, { token: admin, ...(method === 'GET' ? {} : { body: { name: 'x' } }) });
      expect([method, path, r.status, r.body]).toEqual([method, path, 400, { error: 'X-Service-Project-Id header required with a platform credential outside /api/v1/admin' }]);
    }
    expect(await keyCount()).toBe(keysBefore);
    expect(Number((await stack.sql.query('SELECT count(*) FROM projects')).rows[0].count)).toBe(projectsBefore);
  });

  test('with the header, the permissions route answers as usual', async () => {
    const r = await stack.call('GET', '/api/v1/permissions', { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id } });
    expect(r.status).toBe(200);
  });
});

describe('creating keys with permission lists', () => {
  test('an unknown entry is refused with 400 naming it, and nothing is created', async () => {
    const before = await keyCount();
    const r = await create({ name: 'bad', permissions: ['emails:write', 'emails:teleport'] });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain('emails:teleport');
    expect(r.body.fields.permissions).toBe('unknown permission: emails:teleport');
    expect(await keyCount()).toBe(before);
  });

  test('session-only permissions cannot be granted', async () => {
    const r = await create({ name: 'bad', permissions: ['project:delete'] });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain('project:delete');
  });

  test('* stands alone', async () => {
    const r = await create({ name: 'bad', permissions: ['*', 'emails:read'] });
    expect(r.status).toBe(400);
    expect(r.body.fields.permissions).toMatch(/only entry/);
  });
});

describe('judging a key', () => {
  test('an empty list grants nothing', async () => {
    const { token } = await tenant.key([]);
    const r = await stack.call('GET', '/api/v1/api-keys', { token });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'no access to apikeys in this project' });
  });

  test('another action on the resource names the one required', async () => {
    const { token } = await tenant.key(['apikeys:read']);
    const r = await stack.call('POST', '/api/v1/api-keys', { token, body: { name: 'x' } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'permission apikeys:write required' });
  });

  test('permissions on other resources are no access to this one', async () => {
    const { token } = await tenant.key(['emails:write', 'webhooks:read']);
    const r = await stack.call('GET', '/api/v1/api-keys', { token });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'no access to apikeys in this project' });
  });

  test('* passes every project-level check', async () => {
    const { token } = await tenant.key(['*']);
    expect((await stack.call('GET', '/api/v1/api-keys', { token })).status).toBe(200);
    expect((await stack.call('POST', '/api/v1/api-keys', { token, body: { name: 'y' } })).status).toBe(201);
  });
});

describe('refused to every key: deleting the project', () => {
  const projectExists = async (id: string) => (await stack.sql.query('SELECT 1 FROM projects WHERE id = $1', [id])).rowCount === 1;

  test('a key holding * cannot delete its project', async () => {
    const { token } = await tenant.key(['*']);
    const r = await stack.call('DELETE', '/api/v1/project', { token });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatch(/project:delete/);
    expect(await projectExists(tenant.project.id)).toBe(true);
  });

  test('an admin session cannot; the owner can', async () => {
    const doomed = await seedProject(stack, admin, 'doomed');
    const { rows: [boss] } = await stack.sql.query(`INSERT INTO users (email) VALUES ($1) RETURNING id`, [`${crypto.randomUUID()}@example.com`]);
    await stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, 'admin')`, [doomed.project.id, boss.id]);
    const adminHeaders = { cookie: await sessionCookie(stack, boss.id), 'X-Service-Project-Id': doomed.project.id, origin: stack.url };
    const r1 = await stack.call('DELETE', '/api/v1/project', { headers: adminHeaders });
    expect(r1.status).toBe(403);
    expect(r1.body).toEqual({ error: 'project owner role required' });
    expect(await projectExists(doomed.project.id)).toBe(true);

    const ownerHeaders = { cookie: await sessionCookie(stack, doomed.user.id), 'X-Service-Project-Id': doomed.project.id, origin: stack.url };
    expect((await stack.call('DELETE', '/api/v1/project', { headers: ownerHeaders })).status).toBe(204);
    expect(await projectExists(doomed.project.id)).toBe(false);
  });

  test('a platform credential, owner-equivalent, can', async () => {
    const doomed = await seedProject(stack, admin, 'doomed2');
    const r = await stack.call('DELETE', '/api/v1/project', { token: admin, headers: { 'X-Service-Project-Id': doomed.project.id } });
    expect(r.status).toBe(204);
    expect(await projectExists(doomed.project.id)).toBe(false);
  });
});
