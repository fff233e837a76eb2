// The HTTP layer answers one step off the happy path as consistently as on it
// (issue 26, item 6): a body of no or another type is 415 saying what the route
// takes; a query parameter the route does not declare is 400 naming it, as an
// unknown body field is; a declared path asked with an undeclared method is 405
// with `Allow`, an unknown path 404.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;
let token: string;

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin);
  token = (await tenant.key(['*'])).token;
});
afterAll(async () => { await stack?.stop(); });

const count = async (table: string) => Number((await stack.sql.query(`SELECT count(*) FROM ${table}`)).rows[0].count);

describe('415 says what the route takes', () => {
  test('a JSON body sent without Content-Type is 415 naming application/json, and creates nothing', async () => {
    const before = await count('api_keys');
    // Bytes, not a string: fetch would add `text/plain` to a string body.
    const res = await fetch(`${stack.url}/api/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: new TextEncoder().encode('{"name":"typeless"}'),
    });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect([res.status, await res.json()]).toEqual([415, {
      error: 'unsupported content-type (none): the body must be application/json',
      fields: { 'content-type': 'must be application/json' },
    }]);
    expect(await count('api_keys')).toBe(before);
  });

  test('another type is 415 naming the type sent and the one expected', async () => {
    const r = await stack.call('POST', '/api/v1/domains', { token, rawBody: 'name=example.org', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' } });
    expect([r.status, r.body]).toEqual([415, {
      error: 'unsupported content-type application/x-www-form-urlencoded: the body must be application/json',
      fields: { 'content-type': 'must be application/json' },
    }]);
    expect(await count('domains')).toBe(0);
  });

  test('JSON with a charset, or a +json type, is still JSON', async () => {
    const r = await stack.call('POST', '/api/v1/api-keys', { token, body: { name: 'charset' }, headers: { 'content-type': 'application/json; charset=utf-8' } });
    expect(r.status).toBe(201);
  });
});

describe('a query parameter the route does not declare is refused, naming it', () => {
  test.each([
    ['a list with no query parameters', '/api/v1/domains?verbose=1', 'verbose'],
    ['a misspelt filter', '/api/v1/emails?limt=5', 'limt'],
    ['an admin list', '/api/v1/admin/security-events?user=x', 'user'],
  ])('%s: 400 `invalid query: <name>: unknown parameter`', async (_case, path, name) => {
    const r = await stack.call('GET', path, { token: path.includes('/admin/') ? admin : token });
    expect([r.status, r.body]).toEqual([400, { error: `invalid query: ${name}: unknown parameter`, fields: { [name]: 'unknown parameter' } }]);
  });

  test('offset on a keyset-paged list is refused saying how to page', async () => {
    const r = await stack.call('GET', '/api/v1/bounces?offset=10', { token });
    const problem = 'not supported: page with before and before_id';
    expect([r.status, r.body]).toEqual([400, { error: `invalid query: offset: ${problem}`, fields: { offset: problem } }]);
  });

  test('a create with an unknown parameter changes nothing', async () => {
    const before = await count('api_keys');
    const r = await stack.call('POST', '/api/v1/api-keys?dry_run=true', { token, body: { name: 'dry' } });
    expect([r.status, r.body]).toEqual([400, { error: 'invalid query: dry_run: unknown parameter', fields: { dry_run: 'unknown parameter' } }]);
    expect(await count('api_keys')).toBe(before);
  });

  test('declared parameters still pass', async () => {
    expect((await stack.call('GET', '/api/v1/emails?limit=5&status=sent', { token })).status).toBe(200);
    expect((await stack.call('GET', '/api/v1/audit-log?limit=2&offset=1', { token })).status).toBe(200);
  });

  test('the OIDC callback takes what providers add (session_state, iss, …): none is an unknown parameter', async () => {
    const r = await stack.call('GET', '/app/api/session/oidc/callback?code=c&state=s&iss=https%3A%2F%2Fidp.example&session_state=abc&scope=openid&authuser=0');
    expect(r.status).not.toBe(400);
    expect(JSON.stringify(r.body ?? '')).not.toMatch(/unknown parameter/);
  });
});

describe('405 with Allow on a declared path, 404 on an unknown one', () => {
  test('DELETE on a collection is 405 naming GET and POST, and deletes nothing', async () => {
    await stack.call('POST', '/api/v1/domains', { token, body: { name: 'kept.example' } });
    const r = await stack.call('DELETE', '/api/v1/domains', { token });
    expect([r.status, r.body]).toEqual([405, { error: 'method DELETE not allowed on /api/v1/domains: allowed GET, POST' }]);
    expect(r.headers.get('allow')).toBe('GET, POST');
    expect(await count('domains')).toBe(1);
  });

  test('PUT on an API key is 405 (only DELETE is declared there), and the key is unchanged', async () => {
    const victim = await tenant.key(['domains:read']);
    const path = `/api/v1/api-keys/${victim.api_key.id}`;
    const r = await stack.call('PUT', path, { token, body: { name: 'renamed' } });
    expect([r.status, r.body]).toEqual([405, { error: `method PUT not allowed on ${path}: allowed DELETE` }]);
    expect(r.headers.get('allow')).toBe('DELETE');
    expect((await stack.sql.query('SELECT name FROM api_keys WHERE id = $1', [victim.api_key.id])).rows).toEqual([{ name: 'key-domains:read' }]);
  });

  test.each([
    ['GET', '/relay/v1/inbound', 'POST'],
    ['GET', '/webhooks/ses', 'POST'],
    ['PUT', '/app/api/session', 'DELETE, GET, POST'],
  ])('every surface: %s %s is 405, Allow: %s', async (method, path, allow) => {
    const r = await stack.call(method, path, { headers: { origin: new URL(stack.url).origin } });
    expect(r.status).toBe(405);
    expect(r.headers.get('allow')).toBe(allow);
    expect(r.body.error).toBe(`method ${method} not allowed on ${path}: allowed ${allow}`);
  });

  test('HEAD where GET is declared is served, not refused', async () => {
    const r = await stack.call('HEAD', '/api/v1/domains', { token });
    expect(r.status).toBe(200);
  });

  test('an unknown path is 404, whatever the method', async () => {
    for (const method of ['GET', 'DELETE']) {
      const r = await stack.call(method, '/api/v1/no-such-thing', { token });
      expect([r.status, r.body]).toEqual([404, { error: 'not found' }]);
    }
    // A declared path with a trailing slash is another path (the router is strict).
    expect((await stack.call('GET', '/api/v1/domains/', { token })).status).toBe(404);
  });
});
