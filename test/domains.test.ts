// Domains a project receives mail for (issue 7, "What a user can do"): create,
// list, get, delete, one registration per project and name (ownership:
// domain-ownership.test.ts). DKIM and verification (issue 9):
// domain-verification.test.ts.
import { describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';
import { proveOwnership } from './support/domain-ownership.js';

const env = useTenantStack({
  // An address as the public host (as `pnpm dev` has it): SPF names it with ip4:, not include:.
  settings: { SERVICE_SERVER_PUBLIC_URL: 'http://127.0.0.1:8787' },
  keys: { writer: ['domains:write', 'domains:read'], reader: ['domains:read'], deleter: ['domains:delete', 'domains:read'] },
});

const unique = (label: string) => `${label}-${crypto.randomUUID().slice(0, 8)}.example`;
const domainRows = async () => (await env.stack.sql.query('SELECT id, project_id, name FROM domains ORDER BY id')).rows;
const create = (name: unknown, token = env.keys.writer) => env.stack.call('POST', '/api/v1/domains', { token, body: { name } });

describe('POST /api/v1/domains', () => {
  test('201 {domain}: stored lower case without the trailing dot', async () => {
    const name = unique('mail.Acme');
    const r = await create(`  ${name.toUpperCase()}. `);
    expect(r.status).toBe(201);
    const lower = name.toLowerCase();
    expect(r.body).toEqual({
      domain: {
        id: expect.any(String), project_id: env.tenant.project.id, name: lower,
        status: 'pending', status_reason: null, ownership_proven_at: null, verified_at: null, last_checked_at: null,
        dkim: { selector: expect.stringMatching(/^em\d{6}$/), algorithm: 'rsa' },
        dns_records: [
          { type: 'TXT', name: `${r.body.domain.dkim.selector}._domainkey.${lower}`, value: expect.stringMatching(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+={0,2}$/), purpose: 'dkim', required: true, status: 'pending' },
          { type: 'TXT', name: lower, value: 'v=spf1 ip4:127.0.0.1 ~all', purpose: 'spf', required: true, status: 'pending' },
          { type: 'TXT', name: `_dmarc.${lower}`, value: 'v=DMARC1; p=none', purpose: 'dmarc', required: false, status: 'pending' },
          // No MX: the public host is an address, and an MX names a host, never an IP (docs/sending.md).
        ],
        created_at: expect.any(String),
      },
    });
    expect(new Date(r.body.domain.created_at).toISOString()).toBe(r.body.domain.created_at);
    const { rows } = await env.stack.sql.query('SELECT project_id, name FROM domains WHERE id = $1', [r.body.domain.id]);
    expect(rows).toEqual([{ project_id: env.tenant.project.id, name: name.toLowerCase() }]);
  });

  test('an internationalised name is taken in punycode', async () => {
    const name = `xn--bcher-kva-${crypto.randomUUID().slice(0, 6)}.example`;
    const r = await create(name);
    expect(r.status).toBe(201);
    expect(r.body.domain.name).toBe(name);
  });

  test.each([
    ['localhost', 'must have at least two labels (example.com)'],
    ['-bad.example', 'label "-bad" must not start or end with a hyphen'],
    ['bad-.example', 'label "bad-" must not start or end with a hyphen'],
    ['under_score.example', 'label "under_score" may hold only letters, digits and hyphens'],
    ['double..dot.example', 'must not contain an empty label'],
    ['bücher.example', 'must be ASCII: write an internationalised name in punycode (xn--…)'],
    ['mail example.com', 'must not contain spaces or control characters'],
    ['203.0.113.9', 'must not end in an all-numeric label (an IP address is not a domain)'],
    [`${'a'.repeat(64)}.example`, `label "${'a'.repeat(20)}…" is longer than 63 characters`],
    [`${'abc.'.repeat(63)}example`, 'must be at most 253 characters'],
    ['', 'must not be empty'],
  ])('%j is 400 naming name, and nothing is stored', async (name, problem) => {
    const before = await domainRows();
    const r = await create(name);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid request body: name: ${problem}`, fields: { name: problem } });
    expect(await domainRows()).toEqual(before);
  });

  test('a missing name, a wrong type and an unknown field are 400 naming the field', async () => {
    const before = await domainRows();
    const missing = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.writer, body: {} });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.fields)).toEqual(['name']);
    const wrongType = await create(42);
    expect(wrongType.status).toBe(400);
    expect(Object.keys(wrongType.body.fields)).toEqual(['name']);
    const extra = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.writer, body: { name: unique('x'), dkim: true } });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toMatch(/^invalid request body: /);
    expect(extra.body.error).toContain('dkim');
    const malformed = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.writer, rawBody: '{"name":' });
    expect(malformed).toMatchObject({ status: 400, body: { error: 'malformed JSON body' } });
    expect(await domainRows()).toEqual(before);
  });

  test('409 for a name already registered by this project, or proven by another, without naming the holder', async () => {
    const name = unique('taken');
    const created = await create(name);
    expect(created.status).toBe(201);
    // Another project is refused only once this one proved the name (domain-ownership.test.ts).
    await proveOwnership(env.stack, created.body.domain.id);
    const before = await domainRows();
    const foreignWriter = (await env.other.key(['domains:write'])).token;
    for (const [spelling, token, error] of [
      [name, env.keys.writer, `domain ${name} is already registered in this project`],
      [`${name.toUpperCase()}.`, env.keys.writer, `domain ${name} is already registered in this project`],
      [name, foreignWriter, `domain ${name} is already registered by another project that proved its ownership`],
    ] as const) {
      const r = await create(spelling, token);
      expect(r.status).toBe(409);
      expect(r.body).toEqual({ error });
    }
    // The answer to the other project is the same: no id, no project name.
    const r = await create(name, foreignWriter);
    expect(JSON.stringify(r.body)).not.toContain(env.tenant.project.id);
    expect(JSON.stringify(r.body)).not.toContain('acme');
    expect(await domainRows()).toEqual(before);
  });

  test('a deleted name can be registered again, by another project too', async () => {
    const name = unique('freed');
    const first = await create(name);
    expect((await env.stack.call('DELETE', `/api/v1/domains/${first.body.domain.id}`, { token: env.keys.deleter })).status).toBe(204);
    const again = await create(name, (await env.other.key(['domains:write'])).token);
    expect(again.status).toBe(201);
    expect(again.body.domain.project_id).toBe(env.other.project.id);
  });
});

describe('GET /api/v1/domains and /{id}', () => {
  test('lists the project\'s domains only, newest first', async () => {
    const a = (await create(unique('list-a'))).body.domain;
    const b = (await create(unique('list-b'))).body.domain;
    const foreign = (await create(unique('list-foreign'), (await env.other.key(['domains:write'])).token)).body.domain;
    const r = await env.stack.call('GET', '/api/v1/domains', { token: env.keys.reader });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body)).toEqual(['domains']);
    const ids = r.body.domains.map((d: { id: string }) => d.id);
    expect(ids).toContain(a.id);
    expect(ids.indexOf(b.id)).toBeLessThan(ids.indexOf(a.id));
    expect(ids).not.toContain(foreign.id);
    expect(r.body.domains.every((d: { project_id: string }) => d.project_id === env.tenant.project.id)).toBe(true);
    expect(r.body.domains.find((d: { id: string }) => d.id === a.id)).toEqual(a);
  });

  test('get answers {domain}; another project\'s id and an unknown id are 404; a non-UUID is 400', async () => {
    const mine = (await create(unique('get'))).body.domain;
    const r = await env.stack.call('GET', `/api/v1/domains/${mine.id}`, { token: env.keys.reader });
    expect(r).toMatchObject({ status: 200, body: { domain: mine } });

    const foreign = (await create(unique('get-foreign'), (await env.other.key(['domains:write'])).token)).body.domain;
    for (const id of [foreign.id, crypto.randomUUID()]) {
      const miss = await env.stack.call('GET', `/api/v1/domains/${id}`, { token: env.keys.reader });
      expect(miss.status).toBe(404);
      expect(miss.body).toEqual({ error: 'domain not found' });
    }
    const bad = await env.stack.call('GET', '/api/v1/domains/not-a-uuid', { token: env.keys.reader });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'invalid param: id: must be a UUID', fields: { id: 'must be a UUID' } });
  });
});

describe('DELETE /api/v1/domains/{id}', () => {
  test('204; then it is gone; mail stored for it stays with domain_id null', async () => {
    const d = (await create(unique('gone'))).body.domain;
    const { rows: [mail] } = await env.stack.sql.query(
      `INSERT INTO inbound_emails (project_id, domain_id, spool_id, sender, auth, size, status, received_at)
       VALUES ($1, $2, $3, 'ann@example.org', '{"spf":"none","dkim":"none","dmarc":"none","aligned":false,"client_ip":"203.0.113.9"}', 10, 'received', now())
       RETURNING id`,
      [env.tenant.project.id, d.id, crypto.randomUUID()],
    );
    const r = await env.stack.call('DELETE', `/api/v1/domains/${d.id}`, { token: env.keys.deleter });
    expect(r.status).toBe(204);
    expect(r.body).toBeNull();
    expect((await env.stack.call('GET', `/api/v1/domains/${d.id}`, { token: env.keys.reader })).status).toBe(404);
    expect((await env.stack.call('DELETE', `/api/v1/domains/${d.id}`, { token: env.keys.deleter })).body).toEqual({ error: 'domain not found' });
    const { rows } = await env.stack.sql.query('SELECT domain_id FROM inbound_emails WHERE id = $1', [mail.id]);
    expect(rows).toEqual([{ domain_id: null }]);
  });

  test('another project\'s domain is 404 and stays; a non-UUID is 400', async () => {
    const foreign = (await create(unique('keep'), (await env.other.key(['domains:write'])).token)).body.domain;
    const r = await env.stack.call('DELETE', `/api/v1/domains/${foreign.id}`, { token: env.keys.deleter });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'domain not found' });
    expect((await env.stack.sql.query('SELECT 1 FROM domains WHERE id = $1', [foreign.id])).rowCount).toBe(1);
    const bad = await env.stack.call('DELETE', '/api/v1/domains/123', { token: env.keys.deleter });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid param: id: must be a UUID', fields: { id: 'must be a UUID' } } });
  });
});

describe('permissions and audit', () => {
  test('each route is judged on its own action; refusals change nothing', async () => {
    const d = (await create(unique('perm'))).body.domain;
    const before = await domainRows();
    const none = (await env.tenant.key(['emails:write'])).token;
    const cases: [string, string, string, unknown, string][] = [
      ['POST', '/api/v1/domains', env.keys.reader, { name: unique('nope') }, 'permission domains:write required'],
      ['DELETE', `/api/v1/domains/${d.id}`, env.keys.writer, undefined, 'permission domains:delete required'],
      ['GET', '/api/v1/domains', none, undefined, 'no access to domains in this project'],
      ['GET', `/api/v1/domains/${d.id}`, none, undefined, 'no access to domains in this project'],
      ['POST', '/api/v1/domains', none, { name: unique('nope') }, 'no access to domains in this project'],
    ];
    for (const [method, path, token, body, error] of cases) {
      const r = await env.stack.call(method, path, { token, body });
      expect([method, path, r.status, r.body]).toEqual([method, path, 403, { error }]);
    }
    expect(await domainRows()).toEqual(before);
    expect((await env.stack.call('GET', '/api/v1/domains')).status).toBe(401);
  });

  test('create and delete are recorded as domain.created and domain.deleted; reads are not', async () => {
    const before = await settledAuditEvents(env.stack, env.admin);
    const d = (await create(unique('audited'))).body.domain;
    await env.stack.call('GET', `/api/v1/domains/${d.id}`, { token: env.keys.reader });
    await env.stack.call('DELETE', `/api/v1/domains/${d.id}`, { token: env.keys.deleter });
    const events = addedEvents(before, await settledAuditEvents(env.stack, env.admin)).filter((e) => e.project_id === env.tenant.project.id);
    expect(events.map((e) => [e.type, e.method, e.status])).toEqual([['domain.created', 'POST', 201], ['domain.deleted', 'DELETE', 204]]);
  });
});
