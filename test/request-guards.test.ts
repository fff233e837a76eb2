// Guards every request meets before its route: the body size limit, the
// client address when the peer is unknown, the API description served once,
// and what the log may say when the database refuses a query.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const MAX_BODY = 4096;
let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_SERVER_MAX_BODY_BYTES: String(MAX_BODY) }, captureLogs: true });
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin);
});
afterAll(async () => { await stack?.stop(); });

const keyCount = async () => Number((await stack.sql.query('SELECT count(*) FROM api_keys')).rows[0].count);
const asOwner = () => ({ authorization: `Bearer ${admin}`, 'X-Service-Project-Id': tenant.project.id, 'content-type': 'application/json' });

describe('server.max_body_bytes', () => {
  const oversized = JSON.stringify({ name: 'big', permissions: [], pad: 'x'.repeat(MAX_BODY) });

  test('a body with a Content-Length above the limit is 413 before it is parsed', async () => {
    const before = await keyCount();
    const r = await fetch(`${stack.url}/api/v1/api-keys`, { method: 'POST', headers: asOwner(), body: oversized });
    expect(r.status).toBe(413);
    expect(await r.json()).toEqual({ error: `request body larger than ${MAX_BODY} bytes` });
    expect(await keyCount()).toBe(before);
  });

  test('a chunked body is counted as it streams in', async () => {
    const before = await keyCount();
    const chunks = [oversized.slice(0, 1000), oversized.slice(1000)];
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    const r = await fetch(`${stack.url}/api/v1/api-keys`, { method: 'POST', headers: asOwner(), body, duplex: 'half' } as RequestInit);
    expect(r.status).toBe(413);
    expect(await r.json()).toEqual({ error: `request body larger than ${MAX_BODY} bytes` });
    expect(await keyCount()).toBe(before);
  });

  test('a body within the limit reaches validation', async () => {
    const r = await fetch(`${stack.url}/api/v1/api-keys`, { method: 'POST', headers: asOwner(), body: JSON.stringify({ name: 'x'.repeat(200) }) });
    expect(r.status).toBe(400);
    expect((await r.json()).fields).toEqual({ name: 'must be at most 100 characters' });
  });
});

describe('an unknown peer', () => {
  // Locally Miniflare always sets CF-Connecting-IP; an unreadable one stands in
  // for a self-hosted workerd that sends none (the unit tests of peerAddress
  // cover the absent header).
  test('is the address `unknown`, which no allowlist holds, not even loopback or 0.0.0.0/0', async () => {
    const key = await tenant.key(['apikeys:read'], { allowed_ips: ['127.0.0.1', '0.0.0.0/0', '::/0'] });
    const r = await stack.call('GET', '/api/v1/api-keys', { token: key.token, headers: { 'cf-connecting-ip': 'no-such-address' } });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'API key not allowed from address unknown' });
    expect((await stack.call('GET', '/api/v1/api-keys', { token: key.token })).status).toBe(200);
  });

  test('is recorded as `unknown` in the audit log', async () => {
    const unknownRows = async () => (await stack.sql.query(`SELECT type FROM audit_events WHERE client_ip = 'unknown' AND project_id = $1`, [tenant.project.id])).rows;
    expect(await unknownRows()).toEqual([]);
    const r = await stack.call('POST', '/api/v1/api-keys', { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id, 'cf-connecting-ip': 'garbage' }, body: { name: 'from-garbage' } });
    expect(r.status).toBe(201);
    expect(await eventually(unknownRows, (rows) => rows.length > 0)).toEqual([{ type: 'apikey.created' }]);
  });
});

describe('GET /api/v1/openapi.json', () => {
  test('is served with an ETag that revalidates', async () => {
    const first = await fetch(`${stack.url}/api/v1/openapi.json`);
    expect(first.status).toBe(200);
    const etag = first.headers.get('etag');
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect((await first.json()).openapi).toBe('3.1.0');
    const again = await fetch(`${stack.url}/api/v1/openapi.json`, { headers: { 'if-none-match': etag! } });
    expect(again.status).toBe(304);
    expect((await fetch(`${stack.url}/api/v1/openapi.json`, { headers: { 'if-none-match': '"stale"' } })).status).toBe(200);
  });
});

describe('a query the database refuses', () => {
  test('is a generic 500, logged without its parameters or the row', async () => {
    const poison = `poison-${crypto.randomUUID()}`;
    await stack.sql.query(`ALTER TABLE api_keys ADD CONSTRAINT test_refuse_poison CHECK (name NOT LIKE 'poison-%') NOT VALID`);
    try {
      const r = await stack.call('POST', '/api/v1/api-keys', { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id }, body: { name: poison } });
      expect(r.status).toBe(500);
      expect(r.body).toEqual({ error: 'internal error' });
      const logged = await eventually(async () => stack.logs().filter((l) => l.message.includes('unhandled error')), (l) => l.length > 0);
      const text = logged.map((l) => l.message).join('\n');
      expect(text).toContain('23514');
      expect(text).toContain('test_refuse_poison');
      expect(text).toContain('insert into "api_keys"');
      expect(text).not.toContain(poison);
      expect(text).not.toContain(tenant.project.id);
      expect(stack.logs().some((l) => l.message.includes(poison))).toBe(false);
    } finally {
      await stack.sql.query('ALTER TABLE api_keys DROP CONSTRAINT test_refuse_poison');
    }
  });
});
