// HTTP request rate limits on the RateLimiter Durable Object (spec "Limits").
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { platformToken, seedProject, startTestStack, type Reply, type TestStack } from './support/stack.js';
import { awayFromWindowEdge } from './support/wait.js';
import { createApiKey } from '../edge/src/services/api-keys/create.js';

/** A key minted straight in the database, so minting spends no window. */
const mintKey = async (stack: TestStack, projectId: string, permissions: string[]) =>
  createApiKey(stack.db, projectId, { name: 'minted', permissions, allowed_ips: [], sandbox: false }, null);

const expectLimitHeaders = (r: Reply, limit: number, remaining: number) => {
  expect(r.headers.get('ratelimit-limit')).toBe(String(limit));
  expect(r.headers.get('ratelimit-remaining')).toBe(String(remaining));
  const reset = Number(r.headers.get('ratelimit-reset'));
  expect(reset).toBeGreaterThanOrEqual(0);
  expect(reset).toBeLessThanOrEqual(60);
};

describe('with limits on', () => {
  let stack: TestStack;
  let tenant: Awaited<ReturnType<typeof seedProject>>;
  beforeAll(async () => {
    stack = await startTestStack({
      settings: {
        SERVICE_RATELIMIT_API_PER_MINUTE: '5',
        SERVICE_RATELIMIT_SES_WEBHOOK_PER_MINUTE: '3',
        SERVICE_SERVER_TRUSTED_PROXIES: '127.0.0.1',
      },
    });
    // Bootstrap straight in the database so no request counts against a window.
    const admin = await platformToken(stack);
    tenant = await seedProject(stack, admin);
  });
  afterAll(async () => { await stack?.stop(); });
  beforeEach(() => awayFromWindowEdge());

  test('per API key: the sixth request in a minute gets 429 with Retry-After; another key is unaffected', async () => {
    const a = await tenant.key(['apikeys:read', 'apikeys:write']);
    const b = await tenant.key(['apikeys:read']);
    for (let i = 0; i < 5; i++) {
      const r = await stack.call('GET', '/api/v1/api-keys', { token: a.token });
      expect(r.status).toBe(200);
      expectLimitHeaders(r, 5, 4 - i);
    }
    const before = Number((await stack.sql.query('SELECT count(*) FROM api_keys')).rows[0].count);
    const refused = await stack.call('POST', '/api/v1/api-keys', { token: a.token, body: { name: 'flood' } });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'rate limit exceeded: 5 requests per minute' });
    expectLimitHeaders(refused, 5, 0);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(Number((await stack.sql.query('SELECT count(*) FROM api_keys')).rows[0].count)).toBe(before);

    const other = await stack.call('GET', '/api/v1/api-keys', { token: b.token });
    expect(other.status).toBe(200);
    expectLimitHeaders(other, 5, 4);
  });

  test('tokens made up from a key\'s public prefix never spend that key\'s window', async () => {
    const victim = await mintKey(stack, tenant.project.id, ['apikeys:read']);
    const junk = (i: number) => `${victim.api_key.key_prefix}_${String(i).padStart(43, 'x')}`;
    // From six addresses, so the address limit (below) does not stop the attempt first.
    for (let i = 0; i < 6; i++) {
      const r = await stack.call('GET', '/api/v1/api-keys', { token: junk(i), headers: { 'x-forwarded-for': `198.51.100.${200 + i}` } });
      expect(r.status).toBe(401);
    }
    const r = await stack.call('GET', '/api/v1/api-keys', { token: victim.token });
    expect(r.status).toBe(200);
    expectLimitHeaders(r, 5, 4);
  });

  test('a flood of well-formed made-up tokens from one address meets the address limit', async () => {
    const madeUp = (i: number) => `myk_${String(i).padStart(8, '0')}_${crypto.randomUUID().replace(/-/g, '').padEnd(43, 'a')}`;
    const from = (i: number) => stack.call('GET', '/api/v1/api-keys', { token: madeUp(i), headers: { 'x-forwarded-for': '198.51.100.9' } });
    for (let i = 0; i < 5; i++) expect((await from(i)).status).toBe(401);
    const refused = await from(5);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: 'rate limit exceeded: 5 requests per minute' });
    // A real key from the same address still has its own window.
    const good = await mintKey(stack, tenant.project.id, ['apikeys:read']);
    expect((await stack.call('GET', '/api/v1/api-keys', { token: good.token, headers: { 'x-forwarded-for': '198.51.100.9' } })).status).toBe(200);
  });

  test('IPv6 clients are counted by their /64', async () => {
    const from = (ip: string) => stack.call('GET', '/api/v1/api-keys', { headers: { 'x-forwarded-for': ip } });
    for (let i = 1; i <= 5; i++) expect((await from(`2001:db8:5:6::${i.toString(16)}`)).status).toBe(401);
    // Another address of the same /64 is the same bucket…
    expect((await from('2001:db8:5:6:ffff:ffff:ffff:ffff')).status).toBe(429);
    // …while the neighbouring /64 has its own.
    expect((await from('2001:db8:5:7::1')).status).toBe(401);
  });

  test('without a key, requests are counted per client address', async () => {
    const from = (ip: string) => stack.call('GET', '/api/v1/api-keys', { headers: { 'x-forwarded-for': ip } });
    for (let i = 0; i < 5; i++) {
      const r = await from('198.51.100.1');
      expect(r.status).toBe(401);
      expectLimitHeaders(r, 5, 4 - i);
    }
    expect((await from('198.51.100.1')).status).toBe(429);
    expect((await from('198.51.100.2')).status).toBe(401);
  });

  test('a spoofed X-Forwarded-For from an untrusted peer does not buy a fresh window', async () => {
    // The peer 203.0.113.9 is not a trusted proxy: its X-Forwarded-For is ignored.
    const spoof = (i: number) => stack.call('GET', '/api/v1/api-keys', { headers: { 'cf-connecting-ip': '203.0.113.9', 'x-forwarded-for': `192.0.2.${i}` } });
    for (let i = 0; i < 5; i++) expect((await spoof(i)).status).toBe(401);
    expect((await spoof(99)).status).toBe(429);
  });

  test('an unreadable X-Forwarded-For counts against the connecting address', async () => {
    // The peer 127.0.0.1 is a trusted proxy, but a chain with garbage in it is not believed.
    const viaTrusted = (v: string) => stack.call('GET', '/api/v1/permissions', { headers: { 'x-forwarded-for': v } });
    for (let i = 0; i < 5; i++) expect((await viaTrusted(`not-an-ip-${i}, 198.51.100.50`)).status).toBe(401);
    // All five fell back to 127.0.0.1, whose window is now full, while the
    // address they named still has its own.
    expect((await viaTrusted('198.51.100.50')).status).toBe(401);
    expect((await stack.call('GET', '/api/v1/permissions')).status).toBe(429);
  });

  test('POST /webhooks/ses is limited per client address', async () => {
    const post = (ip: string) => stack.call('POST', '/webhooks/ses', { headers: { 'x-forwarded-for': ip }, body: {} });
    for (let i = 0; i < 3; i++) {
      const r = await post('198.51.100.77');
      expect(r.status).not.toBe(429);
      expectLimitHeaders(r, 3, 2 - i);
    }
    const refused = await post('198.51.100.77');
    expect(refused.status).toBe(429);
    expect(refused.body.error).toBe('rate limit exceeded: 3 requests per minute');
    expect((await post('198.51.100.78')).status).not.toBe(429);
  });
});

describe('switches', () => {
  let stack: TestStack;
  afterAll(async () => { await stack?.stop(); });

  test('ratelimit.enabled=false turns every limiter off', async () => {
    stack = await startTestStack({ settings: { SERVICE_RATELIMIT_ENABLED: 'false', SERVICE_RATELIMIT_API_PER_MINUTE: '1', SERVICE_RATELIMIT_SES_WEBHOOK_PER_MINUTE: '1' } });
    for (let i = 0; i < 4; i++) {
      const r = await stack.call('GET', '/api/v1/permissions');
      expect(r.status).toBe(401);
      expect(r.headers.get('ratelimit-limit')).toBeNull();
      expect((await stack.call('POST', '/webhooks/ses', { body: {} })).status).not.toBe(429);
    }
    await stack.stop();

    // 0 disables one limiter only.
    await awayFromWindowEdge();
    stack = await startTestStack({ settings: { SERVICE_RATELIMIT_API_PER_MINUTE: '0', SERVICE_RATELIMIT_SES_WEBHOOK_PER_MINUTE: '1' } });
    for (let i = 0; i < 4; i++) expect((await stack.call('GET', '/api/v1/permissions')).status).toBe(401);
    expect((await stack.call('POST', '/webhooks/ses', { body: {} })).status).not.toBe(429);
    expect((await stack.call('POST', '/webhooks/ses', { body: {} })).status).toBe(429);
  });
});
