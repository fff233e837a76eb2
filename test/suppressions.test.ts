// Suppressions (minimal, issue 7): senders a project refuses. Create, list in
// pages, delete; one row per bare lower-cased address and project.
import { describe, expect, test } from 'vitest';
import { seedProject } from './support/stack.js';
import { useTenantStack } from './support/tenant-stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';

const env = useTenantStack({
  keys: { writer: ['suppressions:write'], reader: ['suppressions:read'], deleter: ['suppressions:delete'] },
});

const rows = async () => (await env.stack.sql.query('SELECT id, project_id, address, reason FROM suppressions ORDER BY id')).rows;
const create = (body: unknown, token = env.keys.writer) => env.stack.call('POST', '/api/v1/suppressions', { token, body });
const local = () => `u${crypto.randomUUID().slice(0, 8)}`;

describe('POST /api/v1/suppressions', () => {
  test('201 {suppression}: the bare address, lower case; reason defaults to manual', async () => {
    const name = local();
    const r = await create({ address: `Ann Example <${name.toUpperCase()}@Example.ORG>` });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      suppression: { id: expect.any(String), project_id: env.tenant.project.id, address: `${name}@example.org`, reason: 'manual', created_at: expect.any(String) },
    });
    const stored = await env.stack.sql.query('SELECT address, reason FROM suppressions WHERE id = $1', [r.body.suppression.id]);
    expect(stored.rows).toEqual([{ address: `${name}@example.org`, reason: 'manual' }]);

    const withReason = await create({ address: `${local()}@example.org`, reason: '  complained  ' });
    expect(withReason.status).toBe(201);
    expect(withReason.body.suppression.reason).toBe('complained');
  });

  test('a duplicate in any spelling is 409 and changes nothing; another project may hold the same address', async () => {
    const address = `${local()}@example.org`;
    expect((await create({ address })).status).toBe(201);
    const before = await rows();
    for (const spelling of [address, address.toUpperCase(), `<${address}>`, `X <${address}>`]) {
      const r = await create({ address: spelling, reason: 'again' });
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
    [{ address: 'ann@example.org', reason: '' }, 'reason', 'must not be empty'],
    [{ address: 'ann@example.org', reason: 'x'.repeat(201) }, 'reason', 'must be at most 200 characters'],
  ])('%j is 400 naming the field, and nothing is stored', async (body, field, problem) => {
    const before = await rows();
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid request body: ${field}: ${problem}`, fields: { [field]: problem } });
    expect(await rows()).toEqual(before);
  });

  test('a missing address and unknown fields are refused', async () => {
    const before = await rows();
    const missing = await create({ reason: 'x' });
    expect(missing.status).toBe(400);
    expect(Object.keys(missing.body.fields)).toEqual(['address']);
    const extra = await create({ address: `${local()}@example.org`, kind: 'bounce' });
    expect(extra.status).toBe(400);
    expect(extra.body.error).toContain('kind');
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
