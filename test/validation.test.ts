// Bad input gets a 400 naming the problem and changes nothing.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;
let minter: string;

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin);
  minter = (await tenant.key(['apikeys:write', 'apikeys:read'])).token;
});
afterAll(async () => { await stack?.stop(); });

const count = async (table: string) => Number((await stack.sql.query(`SELECT count(*) FROM ${table}`)).rows[0].count);

describe('POST /api/v1/api-keys', () => {
  test('malformed JSON', async () => {
    const before = await count('api_keys');
    const r = await stack.call('POST', '/api/v1/api-keys', { token: minter, rawBody: '{"name": "x",' });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: 'malformed JSON body' });
    expect(await count('api_keys')).toBe(before);
  });

  test.each([
    ['name missing', {}, 'name'],
    ['name of the wrong type', { name: 123 }, 'name'],
    ['empty name', { name: '  ' }, 'name'],
    ['permissions as a string', { name: 'x', permissions: 'emails:read' }, 'permissions'],
    ['permission entries of the wrong type', { name: 'x', permissions: [1] }, 'permissions.0'],
    ['allowed_ips entry that is no address', { name: 'x', allowed_ips: ['999.1.1.1'] }, 'allowed_ips.0'],
    ['allowed_ips CIDR out of range', { name: 'x', allowed_ips: ['10.0.0.0/33'] }, 'allowed_ips.0'],
    ['expires_at not RFC 3339', { name: 'x', expires_at: 'tomorrow' }, 'expires_at'],
    ['expires_at in the past', { name: 'x', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at'],
    ['sandbox not a boolean', { name: 'x', sandbox: 'yes' }, 'sandbox'],
    ['an unknown field', { name: 'x', permision: ['*'] }, 'json'],
    ['a body that is not an object', ['x'], 'json'],
  ])('%s', async (_case, body, field) => {
    const before = await count('api_keys');
    const r = await stack.call('POST', '/api/v1/api-keys', { token: minter, body });
    expect(r.status).toBe(400);
    expect(r.body.fields).toHaveProperty([field]);
    expect(r.body.error).toMatch(/^invalid request body: /);
    expect(await count('api_keys')).toBe(before);
  });

  test.each([
    ['a form body', 'application/x-www-form-urlencoded'],
    ['JSON sent as text', 'text/plain'],
  ])('%s is 415: the route reads JSON only', async (_case, contentType) => {
    const before = await count('api_keys');
    // Either body names a key in its own format: a route that read it regardless of type would create one.
    const r = await stack.call('POST', '/api/v1/api-keys', { token: minter, rawBody: contentType === 'text/plain' ? '{"name":"x"}' : 'name=x', headers: { 'content-type': contentType } });
    expect(r.status).toBe(415);
    // The refusal says what the route takes (issue 26, item 6): it was a bare `Unsupported Media Type`.
    expect(r.body).toEqual({ error: `unsupported content-type ${contentType}: the body must be application/json`, fields: { 'content-type': 'must be application/json' } });
    expect(await count('api_keys')).toBe(before);
  });
});

describe('path parameters', () => {
  test('an id that is not a UUID', async () => {
    const r = await stack.call('POST', '/api/v1/api-keys/not-a-uuid/revoke', { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id } });
    expect(r.status).toBe(400);
    expect(r.body.fields).toHaveProperty('id');
  });
});

describe('admin bootstrap', () => {
  test('a duplicate plan name is 409 and keeps the first', async () => {
    expect((await stack.call('POST', '/api/v1/admin/plans', { token: admin, body: { name: 'pro', hourly_email_limit: 100 } })).status).toBe(201);
    const r = await stack.call('POST', '/api/v1/admin/plans', { token: admin, body: { name: 'pro', hourly_email_limit: 5 } });
    expect(r.status).toBe(409);
    expect(r.body.error).toMatch(/pro/);
    expect((await stack.sql.query(`SELECT hourly_email_limit FROM plans WHERE name = 'pro'`)).rows).toEqual([{ hourly_email_limit: 100 }]);
  });

  test('plan limits must be whole numbers of at least 0', async () => {
    const r = await stack.call('POST', '/api/v1/admin/plans', { token: admin, body: { name: 'neg', daily_email_limit: -1 } });
    expect(r.status).toBe(400);
    expect(r.body.fields).toHaveProperty('daily_email_limit');
  });

  test('a duplicate user email is 409, case-insensitively', async () => {
    expect((await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: 'Ada@example.com' } })).status).toBe(201);
    expect((await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: 'ada@EXAMPLE.com' } })).status).toBe(409);
    const bad = await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: 'not-an-email' } });
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toHaveProperty('email');
  });

  test('a project naming an unknown plan or owner is 400 naming the field, and not created', async () => {
    const before = await count('projects');
    const r1 = await stack.call('POST', '/api/v1/admin/projects', { token: admin, body: { name: 'p', plan_id: crypto.randomUUID() } });
    expect(r1.status).toBe(400);
    expect(r1.body.fields).toEqual({ plan_id: 'no such plan' });
    const r2 = await stack.call('POST', '/api/v1/admin/projects', { token: admin, body: { name: 'p', owner_id: crypto.randomUUID() } });
    expect(r2.status).toBe(400);
    expect(r2.body.fields).toEqual({ owner_id: 'no such user' });
    expect(await count('projects')).toBe(before);
  });

  test('a project with an owner makes them owner and gives them a default project', async () => {
    const { body: { user } } = await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: 'owner@example.com' } });
    const { status, body: { project } } = await stack.call('POST', '/api/v1/admin/projects', { token: admin, body: { name: 'mine', owner_id: user.id } });
    expect(status).toBe(201);
    const { rows } = await stack.sql.query('SELECT role FROM memberships WHERE project_id = $1 AND user_id = $2', [project.id, user.id]);
    expect(rows).toEqual([{ role: 'owner' }]);
    const listed = await stack.call('GET', '/api/v1/admin/users', { token: admin });
    expect(listed.body.users.find((u: { id: string }) => u.id === user.id).default_project_id).toBe(project.id);
  });
});
