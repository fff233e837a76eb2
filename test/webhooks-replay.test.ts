// Replay (docs/webhooks.md, "Replay"): every event of `[since, until)` the
// webhook takes now, sent again as new deliveries, in the order they
// happened; bounded (range, age, count: 400 naming the bound), one at a time
// per webhook (409), another project's webhook 404. The events are outbox
// rows written with their times, as the sweep tests write them.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const env = useTenantStack({
  settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SERVICE_WEBHOOK_RETRY_DELAY: '2s', SERVICE_WEBHOOK_TIMEOUT: '1s', SERVICE_RATELIMIT_WEBHOOK_REPLAY_PER_MINUTE: '3' },
  keys: { hooks: ['webhooks:read', 'webhooks:write', 'webhooks:delete'] },
});
let receiver: WebhookReceiver;

beforeAll(async () => { receiver = await startWebhookReceiver(); });
afterAll(async () => { await receiver?.close(); });
afterEach(async () => {
  await env.stack.sql.query('DELETE FROM webhooks');
  await env.stack.sql.query('DELETE FROM outbox');
  receiver.clear();
  receiver.setFallback({ status: 200, body: 'ok' });
});

async function createWebhook(body: Record<string, unknown>, token = env.keys.hooks) {
  const reply = await env.stack.call('POST', '/api/v1/webhooks', { token, body });
  if (reply.status !== 201) throw new Error(`webhook creation failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.webhook as { id: string };
}

const MINUTE = 60_000;
/** An event that happened `minutesAgo` and was handed over then: [outbox id, its time]. */
async function pastEvent(event: string, data: Record<string, unknown>, minutesAgo: number, projectId = env.tenant.project.id) {
  const { rows: [row] } = await env.stack.sql.query(
    `INSERT INTO outbox (project_id, event, data, created_at, handed_over_at, streamed_at)
     VALUES ($1, $2, $3, now() - $4 * interval '1 minute', now() - $4 * interval '1 minute', now()) RETURNING id, created_at`,
    [projectId, event, JSON.stringify(data), minutesAgo],
  );
  return { id: Number(row.id), at: (row.created_at as Date).toISOString() };
}

const replay = (id: string, body: unknown, token = env.keys.hooks) =>
  env.stack.call('POST', `/api/v1/webhooks/${id}/replay`, { token, body });
const deliveries = async (id: string) =>
  (await env.stack.call('GET', `/api/v1/webhooks/${id}/deliveries?limit=200`, { token: env.keys.hooks })).body.deliveries as any[];
const quietFor = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a replay', () => {
  test('delivers exactly the events of [since, until) the webhook takes', async () => {
    const hook = await createWebhook({ url: `${receiver.url}/r`, events: ['inbound.received'], filters: ['*@example.com'] });
    const inbound = (n: number, sender = 'ann@example.com') => ({ id: crypto.randomUUID(), n, sender });
    const before = await pastEvent('inbound.received', inbound(1), 50);
    const first = await pastEvent('inbound.received', inbound(2), 40);
    await pastEvent('inbound.received', inbound(3), 30);
    await pastEvent('email.sent', { ...inbound(99), recipients: [] }, 30); // not subscribed
    await pastEvent('inbound.received', inbound(98, 'eve@other.example'), 30); // filtered out
    await pastEvent('inbound.received', inbound(4), 20);
    const end = await pastEvent('inbound.received', inbound(5), 10);
    const other = await env.stack.sql.query(`SELECT id FROM projects WHERE id = $1`, [env.other.project.id]);
    await pastEvent('inbound.received', inbound(97), 30, other.rows[0].id); // another project's

    const r = await replay(hook.id, { since: first.at, until: end.at });
    expect(r.status).toBe(202);
    expect(r.body.replay).toEqual({ id: expect.any(String), webhook_id: hook.id, since: first.at, until: end.at, events: 3 });
    const reqs = await eventually(async () => receiver.received(), (q) => q.length === 3);
    await quietFor(500);
    expect(receiver.received()).toHaveLength(3);
    // since included, until excluded (sent side by side, as any deliveries; an ordered webhook keeps each key's order).
    expect(reqs.map((q) => q.body.data.n).sort()).toEqual([2, 3, 4]);
    // The envelope's timestamp is when the event happened.
    expect(reqs.find((q) => q.body.data.n === 2)!.body.timestamp).toBe(first.at);
    expect(before.at < first.at).toBe(true);
    const list = await eventually(() => deliveries(hook.id), (d) => d.length === 3 && d.every((x) => x.status === 'succeeded'));
    for (const d of list) expect(d).toMatchObject({ replay_id: r.body.replay.id, redelivery_of: null, attempts: 1 });
    for (const q of reqs) expect(list.map((d) => d.id)).toContain(q.headers['x-service-delivery-id']);
  });

  test('an empty range queues nothing: 202 with events 0', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['*'] });
    const now = Date.now();
    const r = await replay(hook.id, { since: new Date(now - 5 * MINUTE).toISOString(), until: new Date(now).toISOString() });
    expect(r.status).toBe(202);
    expect(r.body.replay.events).toBe(0);
  });

  test('one at a time per webhook: 409 while an earlier replay still has a pending delivery; a disabled webhook 409', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['*'] });
    await pastEvent('inbound.received', { id: crypto.randomUUID(), sender: 'a@example.com' }, 10);
    receiver.setFallback({ status: 500 });
    const range = { since: new Date(Date.now() - 20 * MINUTE).toISOString(), until: new Date().toISOString() };
    expect((await replay(hook.id, range)).status).toBe(202);
    await eventually(async () => receiver.received(), (q) => q.length === 1);
    const again = await replay(hook.id, range);
    expect(again.status).toBe(409);
    expect(again.body.error).toMatch(/replay to this webhook is still running/);
    expect((await deliveries(hook.id))).toHaveLength(1);

    await env.stack.sql.query(`UPDATE webhooks SET disabled_at = now(), disabled_reason = 'test' WHERE id = $1`, [hook.id]);
    await env.stack.sql.query(`UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = null WHERE webhook_id = $1`, [hook.id]);
    const disabled = await replay(hook.id, range);
    expect(disabled.status).toBe(409);
    expect(disabled.body.error).toMatch(/disabled/);
    expect((await deliveries(hook.id))).toHaveLength(1);
  });
});

describe('rate limit', () => {
  test('a fourth replay request to one webhook within a minute is 429 with Retry-After and queues nothing; another webhook has its own window', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['*'] });
    // Empty ranges: each is a 202 that leaves nothing pending, so no 409 gets in the way.
    const range = () => ({ since: new Date(Date.now() - 10 * MINUTE).toISOString(), until: new Date(Date.now() - 9 * MINUTE).toISOString() });
    // Fixed one-minute windows: start with at least 15 s of one left, so the four requests share it.
    const intoWindow = Date.now() % 60_000;
    if (intoWindow > 45_000) await new Promise((r) => setTimeout(r, 60_000 - intoWindow + 100));
    for (let i = 0; i < 3; i++) expect((await replay(hook.id, range())).status).toBe(202);
    const replaysBefore = (await env.stack.sql.query('SELECT count(DISTINCT replay_id) FROM webhook_deliveries')).rows[0].count;
    await pastEvent('inbound.received', { id: crypto.randomUUID(), sender: 'a@example.com' }, 9.5);
    const limited = await replay(hook.id, range());
    expect(limited.status).toBe(429);
    expect(limited.body.error).toBe('rate limit exceeded: 3 requests per minute');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await deliveries(hook.id)).toHaveLength(0);
    expect((await env.stack.sql.query('SELECT count(DISTINCT replay_id) FROM webhook_deliveries')).rows[0].count).toBe(replaysBefore);
    const other = await createWebhook({ url: receiver.url, events: ['*'] });
    expect((await replay(other.id, range())).status).toBe(202);
  }, 90_000);
});

describe('bounds and bad input: 400 naming the problem, nothing queued', () => {
  const now = () => Date.now();
  const iso = (ms: number) => new Date(ms).toISOString();
  const DAY = 86_400_000;
  const cases: [string, () => unknown, string, RegExp][] = [
    ['until before since', () => ({ since: iso(now() - 10 * MINUTE), until: iso(now() - 20 * MINUTE) }), 'until', /must be after since/],
    ['a range longer than 7 days', () => ({ since: iso(now() - 6 * DAY), until: iso(now() + 2 * DAY) }), 'until', /at most 7 days/],
    ['since more than 7 days ago', () => ({ since: iso(now() - 8 * DAY), until: iso(now() - 7.5 * DAY) }), 'since', /within the last 7 days/],
    ['since missing', () => ({ until: iso(now()) }), 'since', /required/],
    ['since not a timestamp', () => ({ since: 'yesterday', until: iso(now()) }), 'since', /RFC 3339/],
    ['an unknown field', () => ({ since: iso(now() - MINUTE), until: iso(now()), webhook: 'x' }), '', /webhook/],
  ];
  for (const [name, body, field, problem] of cases) {
    test(name, async () => {
      const hook = await createWebhook({ url: receiver.url, events: ['*'] });
      await pastEvent('inbound.received', { id: crypto.randomUUID(), sender: 'a@example.com' }, 5);
      const r = await replay(hook.id, body());
      expect(r.status).toBe(400);
      expect(r.body.error).toMatch(problem);
      if (field) expect(r.body.fields?.[field]).toMatch(problem);
      expect(await deliveries(hook.id)).toHaveLength(0);
    });
  }

  test('a range holding more than 10000 events the webhook takes is refused, naming the bound', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['inbound.received'] });
    await env.stack.sql.query(
      `INSERT INTO outbox (project_id, event, data, created_at, handed_over_at, streamed_at)
       SELECT $1, 'inbound.received', jsonb_build_object('id', gen_random_uuid(), 'sender', 'a@example.com'), now() - interval '30 minutes', now() - interval '30 minutes', now()
       FROM generate_series(1, 10001)`, [env.tenant.project.id]);
    const range = { since: iso(now() - 40 * MINUTE), until: iso(now() - 20 * MINUTE) };
    const r = await replay(hook.id, range);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/more than the 10000 events a replay may send/);
    expect(await deliveries(hook.id)).toHaveLength(0);
    // One fewer fits.
    await env.stack.sql.query(`DELETE FROM outbox WHERE id = (SELECT max(id) FROM outbox)`);
    const fits = await replay(hook.id, range);
    expect(fits.status).toBe(202);
    expect(fits.body.replay.events).toBe(10_000);
    await env.stack.sql.query('DELETE FROM webhooks');
  });

  test('another project\'s webhook is 404 and nothing is queued', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['*'] });
    await pastEvent('inbound.received', { id: crypto.randomUUID(), sender: 'a@example.com' }, 5);
    const otherKey = await env.other.key(['webhooks:write']);
    const r = await replay(hook.id, { since: iso(now() - 10 * MINUTE), until: iso(now()) }, otherKey.token);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ error: 'webhook not found' });
    expect(await deliveries(hook.id)).toHaveLength(0);
  });
});
