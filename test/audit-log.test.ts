// The audit log: what the middleware records, the read route, the security
// trail of writes without a project, the queue's overflow and retention.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { platformToken, seedProject, sessionCookie, startTestStack, type TestStack } from './support/stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';
import { eventually } from './support/wait.js';

let stack: TestStack;
let admin: string;
let tenant: Awaited<ReturnType<typeof seedProject>>;

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_SERVER_TRUSTED_PROXIES: '127.0.0.1' } });
  admin = await platformToken(stack, { name: 'ops' });
  tenant = await seedProject(stack, admin);
});
afterAll(async () => { await stack?.stop(); });

const eventsOf = async (projectId: string | null) =>
  (await stack.sql.query(
    projectId ? 'SELECT * FROM audit_events WHERE project_id = $1 ORDER BY created_at, id' : 'SELECT * FROM audit_events WHERE project_id IS NULL ORDER BY created_at, id',
    projectId ? [projectId] : [],
  )).rows;

/** Every stored event but the markers, once every earlier request's event is stored or never will be. */
const settled = () => settledAuditEvents(stack, admin);

describe('recording', () => {
  test('a key creating, revoking and deleting a key leaves three project events with every field', async () => {
    const project = await seedProject(stack, admin, 'recorded');
    const actor = await project.key(['apikeys:write', 'apikeys:delete']);
    const before = await settled();

    // 127.0.0.1 is the trusted proxy here: its X-Forwarded-For names the client.
    const created = await stack.call('POST', '/api/v1/api-keys', { token: actor.token, body: { name: 'victim' }, headers: { 'cf-connecting-ip': '127.0.0.1', 'x-forwarded-for': '203.0.113.7' } });
    const id = created.body.api_key.id;
    await stack.call('POST', `/api/v1/api-keys/${id}/revoke`, { token: actor.token, headers: { 'cf-connecting-ip': '127.0.0.1' } });
    await stack.call('DELETE', `/api/v1/api-keys/${id}`, { token: actor.token });

    const events = addedEvents(before, await settled());
    expect(events.map((e) => e.type)).toEqual(['apikey.created', 'apikey.revoke', 'apikey.deleted']);
    expect(events[0]).toMatchObject({
      category: 'project', project_id: project.project.id, actor_id: actor.api_key.id, actor_email: 'api key key-apikeys:write,apikeys:delete',
      client_ip: '203.0.113.7', method: 'POST', path: '/api/v1/api-keys', status: 201, detail: null,
    });
    expect(events[1]).toMatchObject({ method: 'POST', path: `/api/v1/api-keys/${id}/revoke`, status: 200, client_ip: '127.0.0.1' });
    expect(events[2]).toMatchObject({ method: 'DELETE', path: `/api/v1/api-keys/${id}`, status: 204 });
  });

  test('reads and rejected requests are not recorded', async () => {
    const reader = await tenant.key(['apikeys:read']);
    const before = await settled();
    const statuses = [
      (await stack.call('GET', '/api/v1/api-keys', { token: reader.token })).status,
      (await stack.call('POST', '/api/v1/api-keys', { token: reader.token, body: { name: 'x' } })).status,
      (await stack.call('POST', '/api/v1/api-keys', { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id }, body: { name: 5 } })).status,
      (await stack.call('DELETE', `/api/v1/api-keys/${crypto.randomUUID()}`, { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id } })).status,
      (await stack.call('POST', '/api/v1/api-keys', { body: { name: 'x' } })).status,
    ];
    expect(statuses).toEqual([200, 403, 400, 404, 401]);
    expect(addedEvents(before, await settled())).toEqual([]);
  });

  test('a session names the member; a platform credential names itself', async () => {
    const cookie = await sessionCookie(stack, tenant.user.id);
    await stack.call('POST', '/api/v1/api-keys', { headers: { cookie, origin: stack.url }, body: { name: 'by session' } });
    await stack.call('POST', '/api/v1/api-keys', { token: admin, headers: { 'X-Service-Project-Id': tenant.project.id }, body: { name: 'by admin' } });
    const events = await eventually(() => eventsOf(tenant.project.id), (e) => e.some((x) => x.actor_id === tenant.user.id) && e.some((x) => x.actor_email === 'admin api key ops'));
    expect(events.find((e) => e.actor_id === tenant.user.id)).toMatchObject({ actor_email: tenant.user.email, category: 'project', type: 'apikey.created' });
  });
});

describe('the security trail: writes without a project', () => {
  const opsId = async () => (await stack.sql.query(`SELECT id FROM platform_credentials WHERE name = 'ops'`)).rows[0].id as string;

  /** Makes one admin write and returns the events it added: it must be exactly one. */
  async function trailOf(path: string, body: unknown, status = 201) {
    const before = await settled();
    const r = await stack.call('POST', path, { token: admin, headers: { 'cf-connecting-ip': '192.0.2.44' }, body });
    expect(r.status).toBe(status);
    const events = addedEvents(before, await settled());
    expect(events).toHaveLength(1);
    return { reply: r, event: events[0] };
  }

  const expectTrail = async (event: any, type: string, path: string, status: number) => expect(event).toEqual({
    id: expect.any(String), category: 'security', type, project_id: null, actor_id: await opsId(), actor_email: 'admin api key ops',
    client_ip: '192.0.2.44', method: 'POST', path, status, detail: null, user_agent: null, created_at: expect.any(Date),
  });

  test('a plan', async () => {
    const { event } = await trailOf('/api/v1/admin/plans', { name: 'trail' });
    await expectTrail(event, 'plan.created', '/api/v1/admin/plans', 201);
  });

  test('a user', async () => {
    const { event } = await trailOf('/api/v1/admin/users', { email: 'trail-user@example.com' });
    await expectTrail(event, 'user.created', '/api/v1/admin/users', 201);
  });

  test('a project, though it creates one, acts in none', async () => {
    const { event } = await trailOf('/api/v1/admin/projects', { name: 'trail' });
    await expectTrail(event, 'project.created', '/api/v1/admin/projects', 201);
  });

  test('minting and revoking a platform credential', async () => {
    const minted = await trailOf('/api/v1/admin/credentials', { name: 'trail' });
    await expectTrail(minted.event, 'credential.created', '/api/v1/admin/credentials', 201);
    const revokePath = `/api/v1/admin/credentials/${minted.reply.body.credential.id}/revoke`;
    const revoked = await trailOf(revokePath, undefined, 200);
    await expectTrail(revoked.event, 'credential.revoke', revokePath, 200);
  });

  test('a refused admin write leaves no trail', async () => {
    await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: 'dup-trail@example.com' } });
    const before = await settled();
    expect((await stack.call('POST', '/api/v1/admin/users', { token: admin, body: { email: 'dup-trail@example.com' } })).status).toBe(409);
    expect((await stack.call('POST', `/api/v1/admin/credentials/${crypto.randomUUID()}/revoke`, { token: admin })).status).toBe(404);
    expect(addedEvents(before, await settled())).toEqual([]);
  });
});

describe('GET /api/v1/audit-log', () => {
  test('newest first, paged by limit and offset, this project only', async () => {
    const project = await seedProject(stack, admin, 'paged');
    const actor = await project.key(['apikeys:write', 'audit:read']);
    for (let i = 0; i < 5; i++) await stack.call('POST', '/api/v1/api-keys', { token: actor.token, body: { name: `k${i}` } });
    await eventually(() => eventsOf(project.project.id), (e) => e.length >= 6); // 1 by the seeding admin + 5

    const all = await stack.call('GET', '/api/v1/audit-log', { token: actor.token });
    expect(all.status).toBe(200);
    expect(all.body.limit).toBe(50);
    expect(all.body.offset).toBe(0);
    expect(all.body.events).toHaveLength(6);
    const times = all.body.events.map((e: { created_at: string }) => e.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(all.body.events.every((e: { project_id: string }) => e.project_id === project.project.id)).toBe(true);
    expect(Object.keys(all.body.events[0]).sort()).toEqual(['actor_email', 'actor_id', 'category', 'client_ip', 'created_at', 'id', 'method', 'path', 'project_id', 'status', 'type']);

    const page = await stack.call('GET', '/api/v1/audit-log?limit=2&offset=1', { token: actor.token });
    expect(page.body).toMatchObject({ limit: 2, offset: 1 });
    expect(page.body.events.map((e: { id: string }) => e.id)).toEqual(all.body.events.slice(1, 3).map((e: { id: string }) => e.id));
    const beyond = await stack.call('GET', '/api/v1/audit-log?offset=100', { token: actor.token });
    expect(beyond.body.events).toEqual([]);
  });

  test.each([
    ['limit=0', 'limit'], ['limit=201', 'limit'], ['limit=abc', 'limit'], ['limit=-1', 'limit'], ['limit=1.5', 'limit'],
    ['offset=-1', 'offset'], ['offset=x', 'offset'], ['offset=100001', 'offset'],
  ])('?%s is 400 naming %s', async (query, param) => {
    const actor = await tenant.key(['audit:read']);
    const r = await stack.call('GET', `/api/v1/audit-log?${query}`, { token: actor.token });
    expect(r.status).toBe(400);
    expect(r.body.error).toContain(param);
    expect(r.body.fields).toHaveProperty(param);
  });

  test('needs audit:read as a key, and the admin or owner role as a session', async () => {
    const keyless = await tenant.key(['apikeys:read']);
    const r = await stack.call('GET', '/api/v1/audit-log', { token: keyless.token });
    expect(r.status).toBe(403);
    expect(r.body).toEqual({ error: 'no access to audit in this project' });

    const asRole = async (role: string) => {
      const { rows: [user] } = await stack.sql.query(`INSERT INTO users (email) VALUES ($1) RETURNING id`, [`${crypto.randomUUID()}@example.com`]);
      await stack.sql.query(`INSERT INTO memberships (project_id, user_id, role) VALUES ($1, $2, $3)`, [tenant.project.id, user.id, role]);
      const cookie = await sessionCookie(stack, user.id);
      return stack.call('GET', '/api/v1/audit-log', { headers: { cookie, 'X-Service-Project-Id': tenant.project.id } });
    };
    const member = await asRole('member');
    expect(member.status).toBe(403);
    expect(member.body).toEqual({ error: 'project admin role required' });
    expect((await asRole('admin')).status).toBe(200);
    expect((await asRole('owner')).status).toBe(200);
  });
});

/**
 * Runs the cron trigger and answers once it has finished, its `waitUntil`
 * work included: Miniflare's trigger endpoint waits for the scheduled event's
 * outcome (unlike wrangler's `/__scheduled`, which answers straight away).
 */
const runCron = async (s: TestStack) => s.runCron('17 * * * *');

describe('retention', () => {
  test('the scheduled handler deletes events older than audit_log_retention_days (90)', async () => {
    const old = await stack.sql.query(`INSERT INTO audit_events (category, type, project_id, created_at) VALUES ('project', 'old.event', $1, now() - interval '91 days') RETURNING id`, [tenant.project.id]);
    const recent = await stack.sql.query(`INSERT INTO audit_events (category, type, project_id, created_at) VALUES ('project', 'recent.event', $1, now() - interval '89 days') RETURNING id`, [tenant.project.id]);
    expect(await runCron(stack)).toBe(200);
    const exists = async (id: string) => (await stack.sql.query('SELECT 1 FROM audit_events WHERE id = $1', [id])).rowCount === 1;
    expect(await exists(old.rows[0].id)).toBe(false);
    expect(await exists(recent.rows[0].id)).toBe(true);
  });
});

describe('a full queue', () => {
  let small: TestStack;
  beforeAll(async () => {
    small = await startTestStack({ settings: { SERVICE_AUDIT_QUEUE_SIZE: '0', SERVICE_AUDIT_LOG_RETENTION_DAYS: '0' }, captureLogs: true });
  });
  afterAll(async () => { await small?.stop(); });

  test('drops events without failing the request, logging each drop with the running total', async () => {
    const smallAdmin = await platformToken(small);
    const project = await seedProject(small, smallAdmin); // a user, a project and a key: three writes
    const actor = await project.key(['apikeys:write']);
    for (let i = 0; i < 3; i++) {
      expect((await small.call('POST', '/api/v1/api-keys', { token: actor.token, body: { name: `k${i}` } })).status).toBe(201);
    }
    expect((await small.sql.query('SELECT count(*) FROM api_keys')).rows[0].count).toBe('4');

    const expected = ['user.created', 'project.created', 'apikey.created', 'apikey.created', 'apikey.created', 'apikey.created']
      .map((type, i) => ({ level: 'error', message: `audit queue full (0): dropped ${type} event; ${i + 1} dropped in total` }));
    const drops = () => small.logs().filter((l) => l.message.startsWith('audit queue'));
    await eventually(async () => drops(), (d) => d.length >= expected.length);
    expect(drops()).toEqual(expected);
    // Each drop is decided and logged before its response; a queue that never holds an event writes none.
    expect((await small.sql.query('SELECT count(*) FROM audit_events')).rows[0].count).toBe('0');
  });

  test('retention 0 keeps everything', async () => {
    const ancient = await small.sql.query(`INSERT INTO audit_events (category, type, created_at) VALUES ('security', 'ancient', now() - interval '3650 days') RETURNING id`);
    expect(await runCron(small)).toBe(200);
    expect((await small.sql.query('SELECT 1 FROM audit_events WHERE id = $1', [ancient.rows[0].id])).rowCount).toBe(1);
  });
});
