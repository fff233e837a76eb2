// Plan send limits (spec "Plan send limits", issue 9 "Plan limits"): rows of
// the emails table in the trailing hour and day, 0 unlimited, every batch
// recipient counted, suppressed ones not; exact 429 messages; safe under
// concurrency; and GET /api/v1/usage beside them.
import { describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';

const env = useTenantStack({ keys: { domains: ['domains:write'] } });

interface PlanProject { projectId: string; planId: string; plan: string; token: string; sandbox: string; domain: string }

/** A project on its own plan, with a sender key, a sandbox key and a verified domain. */
async function planProject(hourly: number, daily: number): Promise<PlanProject> {
  const tag = crypto.randomUUID().slice(0, 8);
  const plan = `plan-${tag}`;
  const p = await env.stack.call('POST', '/api/v1/admin/plans', { token: env.admin, body: { name: plan, hourly_email_limit: hourly, daily_email_limit: daily } });
  expect(p.status, JSON.stringify(p.body)).toBe(201);
  const project = await env.stack.call('POST', '/api/v1/admin/projects', { token: env.admin, body: { name: `limited-${tag}`, plan_id: p.body.plan.id } });
  expect(project.status).toBe(201);
  const projectId = project.body.project.id;
  const key = async (permissions: string[], sandbox = false) => {
    const r = await env.stack.call('POST', '/api/v1/api-keys', {
      token: env.admin, headers: { 'X-Service-Project-Id': projectId }, body: { name: `k-${permissions.join(',')}`, permissions, sandbox },
    });
    expect(r.status).toBe(201);
    return r.body.token as string;
  };
  const domain = `d${tag}.test`;
  const d = await env.stack.call('POST', '/api/v1/domains', { token: await key(['domains:write']), body: { name: domain } });
  expect(d.status).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [d.body.domain.id]);
  return {
    projectId, planId: p.body.plan.id, plan, domain,
    token: await key(['emails:write', 'emails:read', 'suppressions:write']),
    sandbox: await key(['sandbox:write'], true),
  };
}

const message = (p: PlanProject, to: string[], extra: Record<string, unknown> = {}) =>
  ({ from: `news@${p.domain}`, to, subject: 'Limits', text: 'x', ...extra });
const send = (p: PlanProject, to: string[], opts: { token?: string; headers?: Record<string, string> } = {}) =>
  env.stack.call('POST', '/api/v1/emails/send', { token: opts.token ?? p.token, body: message(p, to), headers: opts.headers });
const rowsOf = async (projectId: string) =>
  Number((await env.stack.sql.query('SELECT count(*) FROM emails WHERE project_id = $1', [projectId])).rows[0].count);
const messagesOf = async (projectId: string) =>
  Number((await env.stack.sql.query('SELECT count(*) FROM outbound_messages WHERE project_id = $1', [projectId])).rows[0].count);
/** Moves the project's rows back in time, as if they had been sent that long ago. */
const age = (projectId: string, interval: string) =>
  env.stack.sql.query(`UPDATE emails SET created_at = created_at - $2::interval WHERE project_id = $1`, [projectId, interval]);
const usage = async (p: PlanProject, token = p.token) => (await env.stack.call('GET', '/api/v1/usage', { token })).body.usage;

const hourly = (n: number, plan: string) => ({ error: `hourly email limit reached (${n} per hour on plan ${plan})` });
const daily = (n: number, plan: string) => ({ error: `daily email limit reached (${n} per day on plan ${plan})` });

describe('the hourly limit', () => {
  test('limit 5: 20 concurrent single-recipient sends → exactly 5 accepted and 5 rows; 15 × 429 with the spec\'s message', async () => {
    const p = await planProject(5, 0);
    const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => send(p, [`r${i}@example.org`])));
    const accepted = replies.filter((r) => r.status === 201);
    const refused = replies.filter((r) => r.status === 429);
    expect(accepted).toHaveLength(5);
    expect(refused).toHaveLength(15);
    for (const r of refused) expect(r.body).toEqual(hourly(5, p.plan));
    expect(await rowsOf(p.projectId)).toBe(5);
    expect(await messagesOf(p.projectId)).toBe(5);
    expect(await usage(p)).toEqual({
      plan: { id: p.planId, name: p.plan },
      hour: { limit: 5, used: 5, remaining: 0 },
      day: { limit: 0, used: 5, remaining: null },
      notices: [],
    });
  });

  test('is a trailing hour: rows older than an hour no longer count', async () => {
    const p = await planProject(2, 0);
    expect((await send(p, ['a@example.org', 'b@example.org'])).status).toBe(201);
    const refused = await send(p, ['c@example.org']);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(hourly(2, p.plan));
    await age(p.projectId, '59 minutes');
    expect((await send(p, ['c@example.org'])).status).toBe(429);
    await age(p.projectId, '2 minutes');
    expect((await send(p, ['c@example.org'])).status).toBe(201);
    expect(await rowsOf(p.projectId)).toBe(3);
  });

  test('a batch counts every recipient of every message: over the limit, nothing is written (all or nothing)', async () => {
    const p = await planProject(5, 0);
    expect((await send(p, ['first@example.org'])).status).toBe(201);
    const over = await env.stack.call('POST', '/api/v1/emails/batch', {
      token: p.token,
      body: { messages: [message(p, ['a@example.org', 'b@example.org']), message(p, ['c@example.org'], { cc: ['d@example.org', 'e@example.org'] })] },
    });
    expect(over.status).toBe(429);
    expect(over.body).toEqual(hourly(5, p.plan));
    expect(await rowsOf(p.projectId)).toBe(1);
    expect(await messagesOf(p.projectId)).toBe(1);
    const fits = await env.stack.call('POST', '/api/v1/emails/batch', {
      token: p.token,
      body: { messages: [message(p, ['a@example.org', 'b@example.org']), message(p, ['c@example.org'], { cc: ['d@example.org'] })] },
    });
    expect(fits.status).toBe(201);
    expect(await rowsOf(p.projectId)).toBe(5);
  });

  test('one message with more recipients than the limit is refused whole', async () => {
    const p = await planProject(3, 0);
    const r = await send(p, ['a@example.org', 'b@example.org', 'c@example.org', 'd@example.org']);
    expect(r.status).toBe(429);
    expect(r.body).toEqual(hourly(3, p.plan));
    expect(await rowsOf(p.projectId)).toBe(0);
  });

  test('suppressed recipients are written but not counted', async () => {
    const p = await planProject(1, 0);
    expect((await env.stack.call('POST', '/api/v1/suppressions', { token: p.token, body: { address: 'gone@example.org' } })).status).toBe(201);
    const mixed = await send(p, ['gone@example.org', 'here@example.org']);
    expect(mixed.status).toBe(201);
    expect(mixed.body.emails.map((e: { status: string }) => e.status)).toEqual(['suppressed', 'queued']);
    // At the limit: a send to suppressed recipients only still goes through.
    const onlySuppressed = await send(p, ['Gone@Example.org']);
    expect(onlySuppressed.status).toBe(201);
    expect(onlySuppressed.body.emails[0].status).toBe('suppressed');
    expect((await send(p, ['other@example.org'])).body).toEqual(hourly(1, p.plan));
    expect(await rowsOf(p.projectId)).toBe(3);
    expect((await usage(p)).hour).toEqual({ limit: 1, used: 1, remaining: 0 });
  });

  test('sandbox sends go through the limits and count against them', async () => {
    const p = await planProject(2, 0);
    const captured = await send(p, ['a@example.org'], { token: p.sandbox });
    expect(captured.status).toBe(201);
    expect(captured.body.emails[0].status).toBe('captured');
    expect((await send(p, ['b@example.org'])).status).toBe(201);
    const refused = await send(p, ['c@example.org'], { token: p.sandbox });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(hourly(2, p.plan));
    expect(await rowsOf(p.projectId)).toBe(2);
  });

  test('a refused send records no Idempotency-Key: the same key goes through once there is room', async () => {
    const p = await planProject(1, 0);
    expect((await send(p, ['a@example.org'])).status).toBe(201);
    const key = { 'Idempotency-Key': `k-${crypto.randomUUID()}` };
    expect((await send(p, ['b@example.org'], { headers: key })).status).toBe(429);
    const { rows } = await env.stack.sql.query('SELECT count(*)::int AS n FROM idempotency_keys WHERE project_id = $1', [p.projectId]);
    expect(rows[0].n).toBe(0);
    await age(p.projectId, '61 minutes');
    const later = await send(p, ['b@example.org'], { headers: key });
    expect(later.status).toBe(201);
    expect((await send(p, ['b@example.org'], { headers: key })).body).toEqual(later.body);
  });
});

describe('the daily limit', () => {
  test('counts the trailing day, with the spec\'s daily message', async () => {
    const p = await planProject(0, 3);
    expect((await send(p, ['a@example.org', 'b@example.org'])).status).toBe(201);
    await age(p.projectId, '5 hours');
    const refused = await send(p, ['c@example.org', 'd@example.org']);
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual(daily(3, p.plan));
    expect((await send(p, ['c@example.org'])).status).toBe(201);
    expect((await send(p, ['d@example.org'])).body).toEqual(daily(3, p.plan));
    expect(await usage(p)).toEqual({
      plan: { id: p.planId, name: p.plan },
      hour: { limit: 0, used: 1, remaining: null },
      day: { limit: 3, used: 3, remaining: 0 },
      notices: [],
    });
    await age(p.projectId, '19 hours 1 minute'); // the first two are now older than a day
    expect((await send(p, ['d@example.org', 'e@example.org'])).status).toBe(201);
    expect(await rowsOf(p.projectId)).toBe(5);
  });

  test('when both are reached the hourly one is named', async () => {
    const p = await planProject(2, 2);
    expect((await send(p, ['a@example.org', 'b@example.org'])).status).toBe(201);
    expect((await send(p, ['c@example.org'])).body).toEqual(hourly(2, p.plan));
    await age(p.projectId, '2 hours');
    expect((await send(p, ['c@example.org'])).body).toEqual(daily(2, p.plan));
  });
});

describe('unlimited', () => {
  test('a project without a plan has no limits; usage says so', async () => {
    const token = (await env.tenant.key(['emails:write', 'emails:read'])).token;
    const domainToken = env.keys.domains;
    const d = await env.stack.call('POST', '/api/v1/domains', { token: domainToken, body: { name: 'noplan.test' } });
    await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [d.body.domain.id]);
    const to = Array.from({ length: 50 }, (_, i) => `u${i}@example.org`);
    const r = await env.stack.call('POST', '/api/v1/emails/batch', {
      token, body: { messages: [1, 2, 3].map(() => ({ from: 'x@noplan.test', to, subject: 's', text: 't' })) },
    });
    expect(r.status).toBe(201);
    expect((await env.stack.call('GET', '/api/v1/usage', { token })).body).toEqual({
      usage: { plan: null, hour: { limit: 0, used: 150, remaining: null }, day: { limit: 0, used: 150, remaining: null }, notices: [] },
    });
  });

  test('a plan with both limits 0 is unlimited', async () => {
    const p = await planProject(0, 0);
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => send(p, [`r${i}@example.org`])));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(await usage(p)).toEqual({
      plan: { id: p.planId, name: p.plan },
      hour: { limit: 0, used: 10, remaining: null },
      day: { limit: 0, used: 10, remaining: null },
      notices: [],
    });
  });
});

describe('GET /api/v1/usage', () => {
  test('needs emails:read, one permission, refused in the spec\'s exact words (issue 13 item 10)', async () => {
    const p = await planProject(10, 100);
    await send(p, ['a@example.org', 'b@example.org']);
    const create = (permissions: string[]) => env.stack.call('POST', '/api/v1/api-keys', {
      token: env.admin, headers: { 'X-Service-Project-Id': p.projectId }, body: { name: 'u', permissions },
    });
    const key = async (permissions: string[]) => (await create(permissions)).body.token as string;
    const expected = { plan: { id: p.planId, name: p.plan }, hour: { limit: 10, used: 2, remaining: 8 }, day: { limit: 100, used: 2, remaining: 98 }, notices: [] };
    expect(await usage(p, await key(['emails:read']))).toEqual(expected);
    // The spec's reporting set reads it too.
    expect(await usage(p, await key(['analytics:read', 'emails:read', 'bounces:read']))).toEqual(expected);
    const writer = await env.stack.call('GET', '/api/v1/usage', { token: await key(['emails:write']) });
    expect(writer.status).toBe(403);
    expect(writer.body).toEqual({ error: 'permission emails:read required' });
    const none = await env.stack.call('GET', '/api/v1/usage', { token: await key(['domains:read', 'analytics:read']) });
    expect(none.status).toBe(403);
    expect(none.body).toEqual({ error: 'no access to emails in this project' });
    // `usage` is no resource any more: a key cannot be given it, so no key holds a permission that grants nothing.
    const refused = await create(['usage:read']);
    expect(refused.status).toBe(400);
    expect(refused.body.fields).toEqual({ permissions: 'unknown permission: usage:read' });
  });

  test('another project\'s sends are not counted', async () => {
    const a = await planProject(10, 0);
    const b = await planProject(10, 0);
    await send(a, ['x@example.org', 'y@example.org', 'z@example.org']);
    expect((await usage(b)).hour).toEqual({ limit: 10, used: 0, remaining: 10 });
    expect((await usage(a)).hour).toEqual({ limit: 10, used: 3, remaining: 7 });
  });
});
