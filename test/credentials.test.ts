// Every way a credential can be refused, against the real Worker and database.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { startEdgeWorker } from '../edge/local/edge-worker.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

// Two proxy hops in front of the service; every other address here is a client.
const PROXY = '192.0.2.10';
const INNER_PROXY = '192.0.2.11';
const CLIENT = '198.51.100.7';

let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_SERVER_TRUSTED_PROXIES: `${PROXY},${INNER_PROXY}` } });
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
  // locally Miniflare passes on the one a test sends.
  const from = (peer: string, forwardedFor?: string): Record<string, string> =>
    ({ 'cf-connecting-ip': peer, ...(forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor }) });

  test('an IPv4 address and a CIDR that include the client pass', async () => {
    for (const allowed of [[CLIENT], ['198.51.100.0/24'], ['10.0.0.0/8', CLIENT]]) {
      const { token } = await tenant.key(['apikeys:read'], { allowed_ips: allowed });
      expect((await list(token, from(CLIENT))).status).toBe(200);
    }
  });

  test('a request from outside an IPv4 allowlist gets 403', async () => {
    const { token } = await tenant.key(['apikeys:read'], { allowed_ips: ['10.0.0.0/8'] });
    const r = await list(token, from(CLIENT));
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: `API key not allowed from address ${CLIENT}` });
  });

  test('IPv6 clients are matched against IPv6 entries', async () => {
    const { token } = await tenant.key(['apikeys:read'], { allowed_ips: ['2001:db8::/32'] });
    expect((await list(token, from('2001:db8:4::9'))).status).toBe(200);
    const outside = await list(token, from('2001:db9::1'));
    expect(outside.status).toBe(403);
    expect(outside.body.error).toBe('API key not allowed from address 2001:db9::1');
    expect((await list(token, from(CLIENT))).status).toBe(403); // an IPv4 client never matches an IPv6 range
  });

  describe('behind a trusted proxy', () => {
    /** Keys allowing only the client, only another address, and only the proxy itself. */
    async function keys() {
      const client = await tenant.key(['apikeys:read'], { allowed_ips: [CLIENT] });
      const other = await tenant.key(['apikeys:read'], { allowed_ips: ['203.0.113.9'] });
      const proxy = await tenant.key(['apikeys:read'], { allowed_ips: [PROXY] });
      return { client: client.token, other: other.token, proxy: proxy.token };
    }

    test('the client its X-Forwarded-For names is matched, not the proxy', async () => {
      const k = await keys();
      expect((await list(k.client, from(PROXY, CLIENT))).status).toBe(200);
      const other = await list(k.other, from(PROXY, CLIENT));
      expect(other.status).toBe(403);
      expect(other.body).toEqual({ error: `API key not allowed from address ${CLIENT}` });
      // The proxy's own address is not the client's.
      expect((await list(k.proxy, from(PROXY, CLIENT))).status).toBe(403);
    });

    test('the chain is read from the right past every trusted hop; what the client wrote itself is not believed', async () => {
      const k = await keys();
      expect((await list(k.client, from(PROXY, `${CLIENT}, ${INNER_PROXY}`))).status).toBe(200);
      // The client claims 203.0.113.9 in its own header; the proxy appended the address it saw.
      const spoof = await list(k.other, from(PROXY, `203.0.113.9, ${CLIENT}`));
      expect(spoof.status).toBe(403);
      expect(spoof.body).toEqual({ error: `API key not allowed from address ${CLIENT}` });
      expect((await list(k.client, from(PROXY, `203.0.113.9, ${CLIENT}`))).status).toBe(200);
    });

    test('an untrusted peer\'s X-Forwarded-For does not count', async () => {
      const k = await keys();
      const r = await list(k.client, from('192.0.2.99', CLIENT));
      expect(r.status).toBe(403);
      expect(r.body).toEqual({ error: 'API key not allowed from address 192.0.2.99' });
      expect((await list(k.other, from('192.0.2.99', '203.0.113.9'))).status).toBe(403);
    });
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

  test('two Workers using a key at once record one write: the SQL guard, not the isolate\'s memory', async () => {
    const { token, api_key } = await tenant.key(['apikeys:read']);
    // Every write that changes this key's last_used_at leaves a row in touch_log.
    await stack.sql.query(`
      CREATE TABLE touch_log (key_id uuid NOT NULL, last_used_at timestamptz);
      CREATE FUNCTION log_touch() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
        BEGIN INSERT INTO touch_log VALUES (NEW.id, NEW.last_used_at); RETURN NEW; END $$;
      CREATE TRIGGER api_keys_touch_log AFTER UPDATE OF last_used_at ON api_keys FOR EACH ROW
        WHEN (OLD.last_used_at IS DISTINCT FROM NEW.last_used_at) EXECUTE FUNCTION log_touch();`);
    // A second Worker on the same database: its own isolate, its own throttle memory.
    const other = await startEdgeWorker({
      vars: { SERVICE_DATABASE_URL: stack.databaseUrl, SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY: stack.encryptionKey, LOCAL_NEON_BRIDGE: inject('bridgeUrl') }, persistTo: false, logLevel: 'error',
    });
    // Hold the key's row so both Workers' writes are in flight at once, each
    // decided on a last_used_at it read as never set.
    const holder = new pg.Client({ connectionString: stack.databaseUrl });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM api_keys WHERE id = $1 FOR UPDATE', [api_key.id]);
      const viaOther = await fetch(`${other.url}/api/v1/api-keys`, { headers: { authorization: `Bearer ${token}` } });
      expect(viaOther.status).toBe(200);
      expect((await list(token)).status).toBe(200);
      // Sessions with a statement writing api_keys in this database; `waiting`:
      // only those stuck behind a lock, which here means behind the held row.
      const writers = async (waiting: boolean) => Number((await holder.query(`
        SELECT count(DISTINCT l.pid) FROM pg_locks l
        WHERE l.relation = 'api_keys'::regclass AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid()
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
          AND (NOT $1 OR EXISTS (SELECT 1 FROM pg_locks w WHERE w.pid = l.pid AND NOT w.granted))`, [waiting])).rows[0].count);
      await eventually(() => writers(true), (n) => n === 2); // both Workers tried: no isolate's memory stopped either
      await holder.query('COMMIT');
      await eventually(() => writers(false), (n) => n === 0); // both writes are done
      const { rows } = await stack.sql.query('SELECT last_used_at FROM touch_log WHERE key_id = $1', [api_key.id]);
      expect(rows).toHaveLength(1);
    } finally {
      await holder.end();
      await other.stop();
      await stack.sql.query('DROP TRIGGER api_keys_touch_log ON api_keys; DROP FUNCTION log_touch(); DROP TABLE touch_log');
    }
  });
});
