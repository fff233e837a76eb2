// Every way a credential can be refused, against the real Worker and database.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;

beforeAll(async () => {
  stack = await startTestStack();
  admin = await platformToken(stack);
  tenant = await seedProject(stack, admin);
});
afterAll(async () => { await stack?.stop(); });

const list = (token: string, headers: Record<string, string> = {}) => stack.call('GET', '/api/v1/api-keys', { token, headers });
const keyCount = async () => Number((await stack.sql.query('SELECT count(*) FROM api_keys')).rows[0].count);

describe('malformed or unknown credentials get 401', () => {
  test('no credential at all', async () => {
    const r = await stack.call('GET', '/api/v1/api-keys');
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'authentication required' });
  });

  test('an Authorization header that is not Bearer', async () => {
    const r = await stack.call('GET', '/api/v1/api-keys', { headers: { authorization: 'Basic dXNlcjpwYXNz' } });
    expect(r.status).toBe(401);
    expect(r.body.error).toMatch(/malformed Authorization header/);
  });

  test('a wrong prefix', async () => {
    const { token } = await tenant.key(['apikeys:read']);
    const r = await list(token.replace(/^myk_/, 'myx_'));
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'malformed API key' });
  });

  test('a truncated token', async () => {
    const { token } = await tenant.key(['apikeys:read']);
    const r = await list(token.slice(0, -1));
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'malformed API key' });
  });

  test('a well-formed token with a wrong secret', async () => {
    const { token } = await tenant.key(['apikeys:read']);
    const last = token.at(-1) === 'A' ? 'B' : 'A';
    const r = await list(token.slice(0, -1) + last);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'invalid API key' });
  });

  test('the token of a deleted key', async () => {
    const { token, api_key } = await tenant.key(['apikeys:read']);
    expect((await list(token)).status).toBe(200);
    const del = await stack.call('DELETE', `/api/v1/api-keys/${api_key.id}`, { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id } });
    expect(del.status).toBe(204);
    const r = await list(token);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'invalid API key' });
  });

  test('an expired key', async () => {
    const { token, api_key } = await tenant.key(['apikeys:read'], { expires_at: new Date(Date.now() + 3_600_000).toISOString() });
    expect((await list(token)).status).toBe(200);
    await stack.sql.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [api_key.id]);
    const r = await list(token);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'API key expired' });
  });

  test('a revoked key is refused on the very next request', async () => {
    const { token, api_key } = await tenant.key(['apikeys:read']);
    expect((await list(token)).status).toBe(200);
    const revoke = await stack.call('POST', `/api/v1/api-keys/${api_key.id}/revoke`, { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id } });
    expect(revoke.status).toBe(200);
    expect(revoke.body.api_key.revoked).toBe(true);
    const r = await list(token);
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'API key revoked' });
  });

  test('a refused credential changes nothing', async () => {
    const before = await keyCount();
    const r = await stack.call('POST', '/api/v1/api-keys', { token: 'myk_abcdefgh_' + 'x'.repeat(43), body: { name: 'x', permissions: ['*'] } });
    expect(r.status).toBe(401);
    expect(await keyCount()).toBe(before);
  });
});

describe('allowed_ips', () => {
  // Behind Cloudflare the connecting address arrives as CF-Connecting-IP;
  // locally the Worker sees 127.0.0.1 unless a test sets the header.
  test('an IPv4 address and a CIDR that include the client pass', async () => {
    for (const allowed of [['127.0.0.1'], ['127.0.0.0/8'], ['10.0.0.0/8', '127.0.0.1']]) {
      const { token } = await tenant.key(['apikeys:read'], { allowed_ips: allowed });
      expect((await list(token)).status).toBe(200);
    }
  });

  test('a request from outside an IPv4 allowlist gets 403', async () => {
    const { token } = await tenant.key(['apikeys:read'], { allowed_ips: ['10.0.0.0/8'] });
    const r = await list(token);
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'API key not allowed from address 127.0.0.1' });
  });

  test('IPv6 clients are matched against IPv6 entries', async () => {
    const { token } = await tenant.key(['apikeys:read'], { allowed_ips: ['2001:db8::/32'] });
    expect((await list(token, { 'cf-connecting-ip': '2001:db8:4::9' })).status).toBe(200);
    const outside = await list(token, { 'cf-connecting-ip': '2001:db9::1' });
    expect(outside.status).toBe(403);
    expect(outside.body.error).toBe('API key not allowed from address 2001:db9::1');
    expect((await list(token)).status).toBe(403); // an IPv4 client never matches an IPv6 range
  });

  test('a spoofed X-Forwarded-For from an untrusted peer does not get in', async () => {
    const { token } = await tenant.key(['apikeys:read'], { allowed_ips: ['198.51.100.7'] });
    const r = await list(token, { 'x-forwarded-for': '198.51.100.7' });
    expect(r.status).toBe(403);
  });
});

describe('project header', () => {
  test('a key with a header naming its own project passes', async () => {
    const { token } = await tenant.key(['apikeys:read']);
    expect((await list(token, { 'X-Service-Project-Id': tenant.project.id })).status).toBe(200);
  });

  test('a key with a header naming another project gets 403', async () => {
    const other = await seedProject(stack, admin, 'other');
    const { token } = await tenant.key(['*']);
    const r = await list(token, { 'X-Service-Project-Id': other.project.id });
    expect(r.status).toBe(403);
    expect(r.body.error).toMatch(/different project/);
  });

  test('a header that is not a UUID gets 400', async () => {
    const { token } = await tenant.key(['apikeys:read']);
    const r = await list(token, { 'X-Service-Project-Id': 'acme' });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/X-Service-Project-Id/);
  });
});

describe('platform credentials', () => {
  test('outside /api/v1/admin without a project header: 400', async () => {
    const r = await stack.call('GET', '/api/v1/api-keys', { token: admin });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/X-Service-Project-Id header required/);
  });

  test('with a project header they act as the owner', async () => {
    const r = await stack.call('POST', '/api/v1/api-keys', { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id }, body: { name: 'by admin', permissions: ['*'] } });
    expect(r.status).toBe(201);
    expect(r.body.api_key.project_id).toBe(tenant.project.id);
  });

  test('a project header naming no project: 404', async () => {
    const r = await stack.call('GET', '/api/v1/api-keys', { token: admin, headers: { 'X-Service-Project-Id': crypto.randomUUID() } });
    expect(r.status).toBe(404);
  });

  test('a project key, even with *, gets 403 on the admin surface', async () => {
    const { token } = await tenant.key(['*']);
    for (const [method, path] of [['GET', '/api/v1/admin/users'], ['POST', '/api/v1/admin/credentials'], ['POST', '/api/v1/admin/plans']] as const) {
      const r = await stack.call(method, path, { token, body: method === 'POST' ? { name: 'x' } : undefined });
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ error: 'admin privileges required' });
    }
    expect((await stack.sql.query(`SELECT count(*) FROM plans WHERE name = 'x'`)).rows[0].count).toBe('0');
  });

  test('revocation is effective on the next request; only the hash is stored', async () => {
    const minted = await stack.call('POST', '/api/v1/admin/credentials', { token: admin, body: { name: 'ci' } });
    expect(minted.status).toBe(201);
    const { token, credential } = minted.body;
    expect(token).toMatch(/^mya_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
    const stored = (await stack.sql.query('SELECT key_hash FROM platform_credentials WHERE id = $1', [credential.id])).rows[0];
    expect(stored.key_hash).toBe(createHash('sha256').update(token).digest('hex'));

    expect((await stack.call('GET', '/api/v1/admin/users', { token })).status).toBe(200);
    const listed = await stack.call('GET', '/api/v1/admin/credentials', { token: admin });
    expect(listed.body.credentials.map((c: { id: string }) => c.id)).toContain(credential.id);
    expect(JSON.stringify(listed.body)).not.toContain(token);

    expect((await stack.call('POST', `/api/v1/admin/credentials/${credential.id}/revoke`, { token: admin })).status).toBe(200);
    const r = await stack.call('GET', '/api/v1/admin/users', { token });
    expect(r.status).toBe(401);
    expect(r.body).toEqual({ error: 'platform credential revoked' });
  });

  test('expired and address-restricted platform credentials are refused', async () => {
    const restricted = await stack.call('POST', '/api/v1/admin/credentials', { token: admin, body: { name: 'office', allowed_ips: ['192.0.2.0/24'] } });
    const r1 = await stack.call('GET', '/api/v1/admin/users', { token: restricted.body.token });
    expect(r1.status).toBe(403);
    const expiring = await stack.call('POST', '/api/v1/admin/credentials', { token: admin, body: { name: 'temp', expires_at: new Date(Date.now() + 60_000).toISOString() } });
    await stack.sql.query(`UPDATE platform_credentials SET expires_at = now() - interval '1 second' WHERE id = $1`, [expiring.body.credential.id]);
    const r2 = await stack.call('GET', '/api/v1/admin/users', { token: expiring.body.token });
    expect(r2.status).toBe(401);
    expect(r2.body).toEqual({ error: 'platform credential expired' });
  });
});

describe('last use', () => {
  test('is recorded after the response, at most once a minute', async () => {
    const { token, api_key } = await tenant.key(['apikeys:read']);
    const lastUsed = async () => (await stack.sql.query('SELECT last_used_at FROM api_keys WHERE id = $1', [api_key.id])).rows[0].last_used_at as Date | null;
    expect(await lastUsed()).toBeNull();
    expect((await list(token)).status).toBe(200);
    let first: Date | null = null;
    for (let i = 0; i < 50 && !first; i++) {
      first = await lastUsed();
      if (!first) await new Promise((r) => setTimeout(r, 50));
    }
    expect(first).toBeInstanceOf(Date);
    // Set it back 30 s: further use within the minute must not move it.
    await stack.sql.query(`UPDATE api_keys SET last_used_at = now() - interval '30 seconds' WHERE id = $1`, [api_key.id]);
    const pinned = await lastUsed();
    for (let i = 0; i < 3; i++) expect((await list(token)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(await lastUsed()).toEqual(pinned);
  });
});
