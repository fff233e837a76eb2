// Cookie safety (spec "Authentication", item 8): a mutating request that
// carries the session cookie is refused with 403 unless its Origin is the
// service's own, the host the request arrived on, or one of
// cors.allowed_origins. Every request here is made with the project owner's
// own session, so a refusal can only be the Origin's doing.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type TestStack } from './support/stack.js';

const PUBLIC_ORIGIN = 'https://mail.example.test';
const CONSOLE_ORIGIN = 'https://console.example.test';
const REFUSED = /^cross-origin request refused/;

let stack: TestStack;
let admin: string;

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_SERVER_PUBLIC_URL: PUBLIC_ORIGIN, SERVICE_CORS_ALLOWED_ORIGINS: CONSOLE_ORIGIN } });
  admin = await platformToken(stack);
});
afterAll(async () => { await stack?.stop(); });

/** A fresh project, its owner signed in, and a key in it to act on. */
async function ownerOf(name: string) {
  const tenant = await seedProject(stack, admin, name);
  const cookie = await sessionCookie(stack, tenant.user.id);
  const victim = await tenant.key(['apikeys:read']);
  /** The owner's session headers, with `origin` as given (undefined sends none). */
  const headers = (origin: string | undefined): Record<string, string> =>
    ({ cookie, 'X-Service-Project-Id': tenant.project.id, ...(origin === undefined ? {} : { origin }) });
  return { ...tenant, victim, headers };
}

const keyExists = async (id: string) => (await stack.sql.query('SELECT 1 FROM api_keys WHERE id = $1', [id])).rowCount === 1;
const projectExists = async (id: string) => (await stack.sql.query('SELECT 1 FROM projects WHERE id = $1', [id])).rowCount === 1;

describe('DELETE', () => {
  test('a foreign, null or missing Origin cannot delete a key; the service\'s own origin can', async () => {
    const owner = await ownerOf('del-key');
    const path = `/api/v1/api-keys/${owner.victim.api_key.id}`;
    for (const origin of ['https://evil.example', 'null', undefined]) {
      const r = await stack.call('DELETE', path, { headers: owner.headers(origin) });
      expect(r.status, `Origin ${origin}`).toBe(403);
      expect(r.body.error).toMatch(REFUSED);
      expect(await keyExists(owner.victim.api_key.id)).toBe(true);
    }
    expect((await stack.call('DELETE', path, { headers: owner.headers(PUBLIC_ORIGIN) })).status).toBe(204);
    expect(await keyExists(owner.victim.api_key.id)).toBe(false);
  });

  test('a cross-site DELETE /api/v1/project by the owner is refused and the project stays', async () => {
    const owner = await ownerOf('del-project');
    for (const origin of ['https://evil.example', 'null', undefined]) {
      const r = await stack.call('DELETE', '/api/v1/project', { headers: owner.headers(origin) });
      expect(r.status, `Origin ${origin}`).toBe(403);
      expect(r.body.error).toMatch(REFUSED);
      expect(await projectExists(owner.project.id)).toBe(true);
    }
    // The same session from the service's own origin may: the refusals above were the Origin's.
    expect((await stack.call('DELETE', '/api/v1/project', { headers: owner.headers(PUBLIC_ORIGIN) })).status).toBe(204);
    expect(await projectExists(owner.project.id)).toBe(false);
  });
});

describe('PUT and PATCH', () => {
  // No route takes PUT or PATCH yet. The check runs in authentication, before
  // routing, so it guards them already: a foreign Origin gets 403 where the
  // service's own origin gets the router's 405 (the path declares DELETE only).
  test.each(['PUT', 'PATCH'])('%s with the cookie: 403 from a foreign or null Origin, before any route is looked up', async (method) => {
    const owner = await ownerOf(`${method.toLowerCase()}-key`);
    const path = `/api/v1/api-keys/${owner.victim.api_key.id}`;
    for (const origin of ['https://evil.example', 'null']) {
      const r = await stack.call(method, path, { headers: owner.headers(origin), body: { name: 'renamed' } });
      expect(r.status, `Origin ${origin}`).toBe(403);
      expect(r.body.error).toMatch(REFUSED);
    }
    const own = await stack.call(method, path, { headers: owner.headers(PUBLIC_ORIGIN), body: { name: 'renamed' } });
    expect(own.status).toBe(405);
    expect(own.body).toEqual({ error: `method ${method} not allowed on ${path}: allowed DELETE` });
    const { rows } = await stack.sql.query('SELECT name FROM api_keys WHERE id = $1', [owner.victim.api_key.id]);
    expect(rows).toEqual([{ name: 'key-apikeys:read' }]);
  });
});

describe('which origins pass', () => {
  test('Origin: null (sandboxed frames, data: URLs, redirects) is refused on a create and nothing is made', async () => {
    const owner = await ownerOf('null-origin');
    const before = Number((await stack.sql.query('SELECT count(*) FROM api_keys WHERE project_id = $1', [owner.project.id])).rows[0].count);
    const r = await stack.call('POST', '/api/v1/api-keys', { headers: owner.headers('null'), body: { name: 'csrf', permissions: ['*'] } });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatch(REFUSED);
    expect(r.body.error).toContain('null');
    expect(Number((await stack.sql.query('SELECT count(*) FROM api_keys WHERE project_id = $1', [owner.project.id])).rows[0].count)).toBe(before);
  });

  test('the public origin, the host the request arrived on and cors.allowed_origins pass', async () => {
    const owner = await ownerOf('allowed');
    for (const origin of [PUBLIC_ORIGIN, stack.url, CONSOLE_ORIGIN]) {
      const r = await stack.call('POST', '/api/v1/api-keys', { headers: owner.headers(origin), body: { name: `from ${origin}` } });
      expect(r.status, `Origin ${origin}`).toBe(201);
    }
  });

  test('near misses are foreign: another scheme, port or a longer host', async () => {
    const owner = await ownerOf('near-miss');
    const other = new URL(stack.url);
    other.port = String(Number(other.port) === 65535 ? 1 : Number(other.port) + 1);
    for (const origin of ['http://mail.example.test', 'https://mail.example.test:8443', 'https://mail.example.test.evil.example', other.origin]) {
      const r = await stack.call('POST', '/api/v1/api-keys', { headers: owner.headers(origin), body: { name: 'csrf' } });
      expect(r.status, `Origin ${origin}`).toBe(403);
      expect(r.body.error).toMatch(REFUSED);
    }
  });
});
