// No audit row and no log line ever holds a credential: not a token, not its
// secret part, not the hash it is stored as, not a session cookie. Every
// credential below is used on requests that succeed and on requests that are
// refused or fail, then the whole audit table and every line the Worker logged
// are searched for them.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type TestStack } from './support/stack.js';
import { settledAuditEvents } from './support/audit.js';
import { eventually } from './support/wait.js';

let stack: TestStack;
let admin: string;

beforeAll(async () => {
  stack = await startTestStack({ captureLogs: true });
  admin = await platformToken(stack, { name: 'ops' });
});
afterAll(async () => { await stack?.stop(); });

/** The strings that must never be recorded for a token: itself, its secret part and its hash. */
function secretsOf(token: string): string[] {
  expect(token).toMatch(/^my[ka]_[a-z0-9]{8}_[A-Za-z0-9_-]{43}$/);
  return [token, token.slice('myk_12345678_'.length), createHash('sha256').update(token).digest('hex')];
}

/** A wrong secret for a real key prefix: found by prefix, refused by hash. */
const wrongSecret = (token: string) => token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');

describe('credentials in the audit log and the logs', () => {
  test('none, after successful, refused and failing requests with every kind of credential', async () => {
    const tenant = await seedProject(stack, admin);
    const asAdmin = { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id } };
    const tokens: string[] = [admin];
    const status = async (method: string, path: string, opts: Parameters<TestStack['call']>[2]) => (await stack.call(method, path, opts)).status;

    // Inserts of a key named "explode" and last-use writes of a key named
    // "touchy" fail in the database: the Worker then logs the failure.
    await stack.sql.query(`
      CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
      CREATE TRIGGER api_keys_explode BEFORE INSERT ON api_keys FOR EACH ROW WHEN (NEW.name = 'explode') EXECUTE FUNCTION refuse();
      CREATE TRIGGER api_keys_touchy BEFORE UPDATE OF last_used_at ON api_keys FOR EACH ROW WHEN (NEW.name = 'touchy') EXECUTE FUNCTION refuse();`);

    // Project keys: one that may mint, and keys minted through the API.
    const minter = await tenant.key(['apikeys:write', 'apikeys:read']);
    tokens.push(minter.token);
    const minted = await stack.call('POST', '/api/v1/api-keys', { token: minter.token, body: { name: 'minted', permissions: ['apikeys:read'] } });
    expect(minted.status).toBe(201);
    tokens.push(minted.body.token);
    const touchy = await stack.call('POST', '/api/v1/api-keys', { token: minter.token, body: { name: 'touchy', permissions: ['apikeys:read'] } });
    tokens.push(touchy.body.token);
    const restricted = await tenant.key(['apikeys:read'], { allowed_ips: ['10.0.0.0/8'] });
    tokens.push(restricted.token);
    const revokedKey = await tenant.key(['apikeys:read']);
    tokens.push(revokedKey.token);
    const deletedKey = await tenant.key(['apikeys:read']);
    tokens.push(deletedKey.token);

    // A platform credential minted through the API, used, then revoked.
    const ci = await stack.call('POST', '/api/v1/admin/credentials', { token: admin, body: { name: 'ci' } });
    expect(ci.status).toBe(201);
    tokens.push(ci.body.token);
    expect(await status('POST', '/api/v1/admin/users', { token: ci.body.token, body: { email: 'by-ci@example.com' } })).toBe(201);
    expect(await status('POST', `/api/v1/admin/credentials/${ci.body.credential.id}/revoke`, { token: admin })).toBe(200);

    // Successes, one with a token pasted into a query parameter by mistake; pasted as a parameter the
    // route does not take, it is refused naming the parameter (docs/api.md), and recorded no more.
    expect(await status('GET', `/api/v1/emails?recipient=${minted.body.token}`, asAdmin)).toBe(200);
    expect(await status('POST', `/api/v1/api-keys?api_key=${minted.body.token}`, { token: minter.token, body: { name: 'query' } })).toBe(400);
    expect(await status('GET', '/api/v1/api-keys', { token: minted.body.token })).toBe(200);
    expect(await status('GET', '/api/v1/api-keys', { token: touchy.body.token })).toBe(200); // its last-use write fails
    expect(await status('POST', `/api/v1/api-keys/${revokedKey.api_key.id}/revoke`, asAdmin)).toBe(200);
    expect(await status('DELETE', `/api/v1/api-keys/${deletedKey.api_key.id}`, { token: minter.token })).toBe(403);
    expect(await status('DELETE', `/api/v1/api-keys/${deletedKey.api_key.id}`, asAdmin)).toBe(204);

    // Refusals.
    expect(await status('GET', '/api/v1/api-keys', { token: wrongSecret(minter.token) })).toBe(401);
    expect(await status('GET', '/api/v1/admin/users', { token: wrongSecret(admin) })).toBe(401);
    expect(await status('GET', '/api/v1/api-keys', { token: revokedKey.token })).toBe(401);
    expect(await status('GET', '/api/v1/api-keys', { token: deletedKey.token })).toBe(401);
    expect(await status('GET', '/api/v1/admin/users', { token: ci.body.token })).toBe(401);
    expect(await status('GET', '/api/v1/api-keys', { token: restricted.token, headers: { 'cf-connecting-ip': '198.51.100.7' } })).toBe(403);
    expect(await status('POST', '/api/v1/api-keys', { token: minted.body.token, body: { name: 'x' } })).toBe(403);
    expect(await status('GET', '/api/v1/api-keys', { token: minter.token, headers: { 'X-Service-Project-Id': crypto.randomUUID() } })).toBe(403);
    expect(await status('POST', '/api/v1/api-keys', { token: minter.token, body: { name: 7 } })).toBe(400);
    // Failures: a 500 whose cause the Worker logs.
    expect(await status('POST', '/api/v1/api-keys', { token: minter.token, body: { name: 'explode' } })).toBe(500);
    expect(await status('POST', '/api/v1/api-keys', { ...asAdmin, body: { name: 'explode' } })).toBe(500);

    // A session: a write from the service's own origin, a refused one and a failing one.
    const cookie = await sessionCookie(stack, tenant.user.id);
    const session = (origin: string) => ({ headers: { cookie, origin, 'X-Service-Project-Id': tenant.project.id } });
    expect(await status('POST', '/api/v1/api-keys', { ...session(stack.url), body: { name: 'by session' } })).toBe(201);
    expect(await status('POST', '/api/v1/api-keys', { ...session('https://evil.example'), body: { name: 'csrf' } })).toBe(403);
    expect(await status('POST', '/api/v1/api-keys', { ...session(stack.url), body: { name: 'explode' } })).toBe(500);

    const events = await settledAuditEvents(stack, admin);
    // The search below covers real rows and real log lines.
    expect(events.filter((e) => e.project_id === tenant.project.id).map((e) => e.actor_email)).toEqual(expect.arrayContaining([
      'admin api key ops', 'api key key-apikeys:write,apikeys:read', tenant.user.email,
    ]));
    expect(events.some((e) => e.actor_email === 'admin api key ci')).toBe(true);
    await eventually(async () => stack.logs(), (l) =>
      l.filter((x) => x.message.startsWith('unhandled error')).length === 3 && l.some((x) => x.message.startsWith('last-used update failed')));
    const logs = stack.logs();

    const forbidden = [...tokens.flatMap(secretsOf), ...tokens.map(wrongSecret), cookie.split('=')[1]!];
    const { rows } = await stack.sql.query('SELECT row_to_json(a)::text AS row FROM audit_events a');
    expect(rows.length).toBeGreaterThan(0);
    for (const secret of forbidden) {
      expect(rows.filter((r) => r.row.includes(secret)), 'audit rows holding a credential').toEqual([]);
      expect(logs.filter((l) => l.message.includes(secret)), 'log lines holding a credential').toEqual([]);
    }
  });
});
