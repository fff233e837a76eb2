// Suppressions (issue 7, completed in issue 17): addresses a project does not
// send to and whose mail it refuses. Create (reason enum, detail, expiry),
// get, list in pages with filters, delete; one row per bare lower-cased
// address and project. What an entry does to sends and inbound mail, and
// when it expires: suppressions-expiry.test.ts.
import { describe, expect, test } from 'vitest';
import { seedProject } from './support/stack.js';
import { useTenantStack } from './support/tenant-stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';

const env = useTenantStack({
  keys: { writer: ['suppressions:write'], reader: ['suppressions:read'], deleter: ['suppressions:delete'] },
});

const rows = async () => (await env.stack.sql.query('SELECT id, project_id, address, reason::text, detail, expires_at, created_at FROM suppressions ORDER BY id')).rows;
const create = (body: unknown, token = env.keys.writer) => env.stack.call('POST', '/api/v1/suppressions', { token, body });
const local = () => `u${crypto.randomUUID().slice(0, 8)}`;

describe('POST /api/v1/suppressions', () => {
  test('201 {suppression}: the bare address, lower case; reason defaults to manual; no detail, source email or expiry', async () => {
    const name = local();
    const r = await create({ address: `Ann Example <${name.toUpperCase()}@Example.ORG>` });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      suppression: {
        id: expect.any(String), project_id: env.tenant.project.id, address: `${name}@example.org`, reason: 'manual',
        detail: null, source_email_id: null, expires_at: null, created_at: expect.any(String),
        // Issue 29: an entry made without a stream holds for every stream.
        stream: null,
      },
    });
    const stored = await env.stack.sql.query('SELECT address, reason::text FROM suppressions WHERE id = $1', [r.body.suppression.id]);
    expect(stored.rows).toEqual([{ address: `${name}@example.org`, reason: 'manual' }]);
  });

  test('reason, detail (trimmed) and expires_at are kept as given, expires_at shown in UTC', async () => {
    const expires = new Date(Math.floor(Date.now() / 1000) * 1000 + 86_400_000);
    // The same instant written with a +02:00 offset.
    const offset = new Date(expires.getTime() + 2 * 3_600_000).toISOString().replace('.000Z', '+02:00');
    const r = await create({ address: `${local()}@example.org`, reason: 'unsubscribe', detail: '  asked by phone  ', expires_at: offset });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.suppression).toMatchObject({ reason: 'unsubscribe', detail: 'asked by phone', source_email_id: null, expires_at: expires.toISOString() });
    for (const reason of ['hard_bounce', 'complaint', 'manual']) {
      const each = await create({ address: `${local()}@example.org`, reason });
      expect([reason, each.status, each.body.suppression.reason]).toEqual([reason, 201, reason]);
    }
  });

  test('a duplicate in any spelling is 409 and changes nothing; another project may hold the same address', async () => {
    const address = `${local()}@example.org`;
    expect((await create({ address })).status).toBe(201);
    const before = await rows();
    for (const spelling of [address, address.toUpperCase(), `<${address}>`, `X <${address}>`]) {
      const r = await create({ address: spelling, detail: 'again' });
      expect(r.status).toBe(409);
      expect(r.body).toEqual({ error: `address ${address} is already suppressed` });
    }
    expect(await rows()).toEqual(before);
    const foreign = await create({ address }, (await env.other.key(['suppressions:write'])).token);
    expect(foreign.status).toBe(201);
    expect(foreign.body.suppression.project_id).toBe(env.other.project.id);
  });

  test.each([
    [{ address: 'not an address' }, 'address', 'must be an email address'],
    [{ address: 'ann@localhost' }, 'address', 'domain must have at least two labels (example.com)'],
    [{ address: 'a..b@example.org' }, 'address', 'must be an email address: the local part is not a dot-atom'],
    [{ address: 'ann@bücher.example' }, 'address', 'domain must be ASCII: write an internationalised name in punycode (xn--…)'],
    [{ address: 'ann\r\n@example.org' }, 'address', 'must be an email address'],
    [{ address: `${'a'.repeat(2000)}@example.org` }, 'address', 'must be at most 1000 characters'],
    [{ address: 'ann@example.org', detail: '' }, 'detail', 'must not be empty'],
    [{ address: 'ann@example.org', detail: '   ' }, 'detail', 'must not be empty'],
    [{ address: 'ann@example.org', detail: 'x'.repeat(201) }, 'detail', 'must be at most 200 characters'],
    [{ address: 'ann@example.org', reason: 'bounced' }, 'reason', 'must be one of hard_bounce, complaint, manual, unsubscribe (not "bounced")'],
    [{ address: 'ann@example.org', reason: 'Manual' }, 'reason', 'must be one of hard_bounce, complaint, manual, unsubscribe (not "Manual")'],
    [{ address: 'ann@example.org', reason: '' }, 'reason', 'must be one of hard_bounce, complaint, manual, unsubscribe (not "")'],
    [{ address: 'ann@example.org', reason: 3 }, 'reason', 'must be one of hard_bounce, complaint, manual, unsubscribe'],
    [{ address: 'ann@example.org', expires_at: '2020-01-01T00:00:00Z' }, 'expires_at', 'must be in the future'],
    [{ address: 'ann@example.org', expires_at: new Date(Date.now() - 1000).toISOString() }, 'expires_at', 'must be in the future'],
    [{ address: 'ann@example.org', expires_at: 'tomorrow' }, 'expires_at', 'must be an RFC 3339 timestamp'],
    [{ address: 'ann@example.org', expires_at: '2099-01-01T00:00:00' }, 'expires_at', 'must be an RFC 3339 timestamp'],
    [{ address: 'ann@example.org', expires_at: 1_900_000_000 }, 'expires_at', 'must be an RFC 3339 timestamp'],
  ])('%j is 400 naming the field, and nothing is stored', async (body, field, problem) => {
    const before = await rows();
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid request body: ${field}: ${problem}`, fields: { [field]: problem } });
    expect(await rows()).toEqual(before);
  });

  test('an entry past its expires_at is replaced by a new one (same id); one still applying is 409', async () => {
    const address = `${local()}@example.org`;
    const first = (await create({ address, reason: 'unsubscribe', detail: 'first', expires_at: new Date(Date.now() + 3_600_000).toISOString() })).body.suppression;
    expect((await create({ address })).status).toBe(409);
    await env.stack.sql.query("UPDATE suppressions SET expires_at = now() - interval '1 second', created_at = now() - interval '1 day' WHERE id = $1", [first.id]);
    const r = await create({ address, detail: 'again' });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.suppression).toMatchObject({ id: first.id, reason: 'manual', detail: 'again', expires_at: null });
    expect(Date.parse(r.body.suppression.created_at)).toBeGreaterThan(Date.parse(first.created_at) - 1000);
    expect((await env.stack.sql.query('SELECT count(*)::int AS n FROM suppressions WHERE address = $1', [address])).rows).toEqual([{ n: 1 }]);
  });

  test('a missing address and unknown fields are refused', async () => {
    const before = await rows();
    const missing = await create({ reason: 'manual' });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.fields)).toEqual(['address']);
    const extra = await create({ address: `${local()}@example.org`, kind: 'bounce' });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toContain('kind');
    // The source email is the service's to set (a bounce or complaint), never the caller's.
    const source = await create({ address: `${local()}@example.org`, source_email_id: crypto.randomUUID() });
    expect(source.status).toBe(400);
    expect(source.body.error).toContain('source_email_id');
    expect(await rows()).toEqual(before);
  });
});

describe('GET /api/v1/suppressions', () => {
  test('pages in address order with next.after until next is null, never another project\'s rows', async () => {
    const project = await seedProject(env.stack, env.admin, 'paged');
    const w = (await project.key(['suppressions:write', 'suppressions:read'])).token;
    const addresses = ['e', 'a', 'd', 'b', 'c'].map((l) => `${l}@example.org`);
    for (const address of addresses) expect((await create({ address }, w)).status).toBe(201);
    await create({ address: 'bb@example.org' }, env.keys.writer); // the tenant's, between b and c

    const seen: string[] = [];
    let after: string | undefined;
    const pages: number[] = [];
    for (;;) {
      const r = await env.stack.call('GET', `/api/v1/suppressions?limit=2${after ? `&after=${encodeURIComponent(after)}` : ''}`, { token: w });
      expect(r.status).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(['next', 'suppressions']);
      pages.push(r.body.suppressions.length);
      seen.push(...r.body.suppressions.map((s: { address: string }) => s.address));
      expect(r.body.suppressions.every((s: { project_id: string }) => s.project_id === project.project.id)).toBe(true);
      if (!r.body.next) break;
      expect(r.body.next).toEqual({ after: seen.at(-1) });
      after = r.body.next.after;
    }
    expect(pages).toEqual([2, 2, 1]);
    expect(seen).toEqual([...addresses].sort());

    const all = await env.stack.call('GET', '/api/v1/suppressions', { token: w });
    expect(all.body.suppressions.map((s: { address: string }) => s.address)).toEqual([...addresses].sort());
    expect(all.body.next).toBeNull();
  });

  test.each([
    ['limit=0', 'limit', 'must be an integer from 1 to 1000'],
    ['limit=1001', 'limit', 'must be an integer from 1 to 1000'],
    ['limit=ten', 'limit', 'must be an integer from 1 to 1000'],
    ['after=', 'after', 'must not be empty'],
  ])('?%s is 400 naming the parameter', async (query, field, problem) => {
    const r = await env.stack.call('GET', `/api/v1/suppressions?${query}`, { token: env.keys.reader });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid query: ${field}: ${problem}`, fields: { [field]: problem } });
  });
});

describe('GET /api/v1/suppressions (filters)', () => {
  test('reason keeps one reason\'s entries; expired entries only with include_expired=true', async () => {
    const project = await seedProject(env.stack, env.admin, 'filtered');
    const w = (await project.key(['suppressions:write', 'suppressions:read'])).token;
    const soon = new Date(Date.now() + 3_600_000).toISOString();
    const made: Record<string, string> = {};
    for (const [address, reason, expires_at] of [
      ['a@example.org', 'manual', undefined], ['b@example.org', 'unsubscribe', undefined],
      ['c@example.org', 'unsubscribe', soon], ['d@example.org', 'manual', soon],
    ] as const) {
      const r = await create({ address, reason, expires_at }, w);
      expect(r.status).toBe(201);
      made[address] = r.body.suppression.id;
    }
    await env.stack.sql.query("UPDATE suppressions SET expires_at = now() - interval '1 second' WHERE id = ANY($1)", [[made['c@example.org'], made['d@example.org']]]);
    const list = async (query: string) => {
      const r = await env.stack.call('GET', `/api/v1/suppressions${query}`, { token: w });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.suppressions.map((x: { address: string }) => x.address);
    };
    expect(await list('')).toEqual(['a@example.org', 'b@example.org']);
    expect(await list('?include_expired=false')).toEqual(['a@example.org', 'b@example.org']);
    expect(await list('?include_expired=true')).toEqual(['a@example.org', 'b@example.org', 'c@example.org', 'd@example.org']);
    expect(await list('?reason=unsubscribe')).toEqual(['b@example.org']);
    expect(await list('?reason=unsubscribe&include_expired=true')).toEqual(['b@example.org', 'c@example.org']);
    expect(await list('?reason=complaint')).toEqual([]);
    // Paging goes on under a filter.
    const page = await env.stack.call('GET', '/api/v1/suppressions?reason=manual&include_expired=true&limit=1', { token: w });
    expect(page.body.next).toEqual({ after: 'a@example.org' });
    expect(await list('?reason=manual&include_expired=true&after=a%40example.org')).toEqual(['d@example.org']);
  });

  test.each([
    ['reason=bounced', 'reason', 'must be one of hard_bounce, complaint, manual, unsubscribe (not "bounced")'],
    ['reason=', 'reason', 'must be one of hard_bounce, complaint, manual, unsubscribe (not "")'],
    ['include_expired=yes', 'include_expired', 'must be true or false'],
  ])('?%s is 400 naming the parameter', async (query, field, problem) => {
    const r = await env.stack.call('GET', `/api/v1/suppressions?${query}`, { token: env.keys.reader });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid query: ${field}: ${problem}`, fields: { [field]: problem } });
  });
});

describe('GET /api/v1/suppressions/{id}', () => {
  test('200 {suppression}, expired ones too; another project\'s id and an unknown one are 404; a non-UUID is 400', async () => {
    const made = (await create({ address: `${local()}@example.org`, reason: 'unsubscribe', detail: 'footer link' })).body.suppression;
    const r = await env.stack.call('GET', `/api/v1/suppressions/${made.id}`, { token: env.keys.reader });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ suppression: made });

    await env.stack.sql.query("UPDATE suppressions SET expires_at = '2020-01-01T00:00:00Z' WHERE id = $1", [made.id]);
    const expired = await env.stack.call('GET', `/api/v1/suppressions/${made.id}`, { token: env.keys.reader });
    expect(expired.body.suppression).toEqual({ ...made, expires_at: '2020-01-01T00:00:00.000Z' });

    const foreign = (await create({ address: `${local()}@example.org` }, (await env.other.key(['suppressions:write'])).token)).body.suppression;
    for (const id of [foreign.id, crypto.randomUUID()]) {
      const miss = await env.stack.call('GET', `/api/v1/suppressions/${id}`, { token: env.keys.reader });
      expect(miss).toMatchObject({ status: 404, body: { error: 'suppression not found' } });
    }
    const bad = await env.stack.call('GET', '/api/v1/suppressions/nope', { token: env.keys.reader });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid param: id: must be a UUID', fields: { id: 'must be a UUID' } } });
  });
});

describe('DELETE /api/v1/suppressions/{id}', () => {
  test('204, then gone; again 404', async () => {
    const s = (await create({ address: `${local()}@example.org` })).body.suppression;
    const r = await env.stack.call('DELETE', `/api/v1/suppressions/${s.id}`, { token: env.keys.deleter });
    expect(r.status).toBe(204);
    expect((await env.stack.sql.query('SELECT 1 FROM suppressions WHERE id = $1', [s.id])).rowCount).toBe(0);
    const again = await env.stack.call('DELETE', `/api/v1/suppressions/${s.id}`, { token: env.keys.deleter });
    expect(again).toMatchObject({ status: 404, body: { error: 'suppression not found' } });
  });

  test('another project\'s id is 404 and stays; a non-UUID is 400 naming id', async () => {
    const foreign = (await create({ address: `${local()}@example.org` }, (await env.other.key(['suppressions:write'])).token)).body.suppression;
    const r = await env.stack.call('DELETE', `/api/v1/suppressions/${foreign.id}`, { token: env.keys.deleter });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'suppression not found' });
    expect((await env.stack.sql.query('SELECT 1 FROM suppressions WHERE id = $1', [foreign.id])).rowCount).toBe(1);
    const bad = await env.stack.call('DELETE', '/api/v1/suppressions/nope', { token: env.keys.deleter });
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid param: id: must be a UUID', fields: { id: 'must be a UUID' } } });
  });
});

describe('permissions and audit', () => {
  test('each route is judged on its own action; refusals change nothing', async () => {
    const s = (await create({ address: `${local()}@example.org` })).body.suppression;
    const before = await rows();
    const none = (await env.tenant.key(['domains:read'])).token;
    const cases: [string, string, string, unknown, string][] = [
      ['POST', '/api/v1/suppressions', env.keys.reader, { address: 'x@example.org' }, 'permission suppressions:write required'],
      ['GET', '/api/v1/suppressions', env.keys.writer, undefined, 'permission suppressions:read required'],
      ['GET', `/api/v1/suppressions/${s.id}`, env.keys.writer, undefined, 'permission suppressions:read required'],
      ['GET', `/api/v1/suppressions/${s.id}`, none, undefined, 'no access to suppressions in this project'],
      ['DELETE', `/api/v1/suppressions/${s.id}`, env.keys.writer, undefined, 'permission suppressions:delete required'],
      ['GET', '/api/v1/suppressions', none, undefined, 'no access to suppressions in this project'],
      ['DELETE', `/api/v1/suppressions/${s.id}`, none, undefined, 'no access to suppressions in this project'],
    ];
    for (const [method, path, token, body, error] of cases) {
      const r = await env.stack.call(method, path, { token, body });
      expect([method, path, r.status, r.body]).toEqual([method, path, 403, { error }]);
    }
    expect(await rows()).toEqual(before);
  });

  test('create and delete are recorded as suppression.created and suppression.deleted', async () => {
    const before = await settledAuditEvents(env.stack, env.admin);
    const s = (await create({ address: `${local()}@example.org` })).body.suppression;
    await env.stack.call('GET', '/api/v1/suppressions', { token: env.keys.reader });
    await env.stack.call('DELETE', `/api/v1/suppressions/${s.id}`, { token: env.keys.deleter });
    const events = addedEvents(before, await settledAuditEvents(env.stack, env.admin)).filter((e) => e.project_id === env.tenant.project.id);
    expect(events.map((e) => e.type)).toEqual(['suppression.created', 'suppression.deleted']);
  });
});
