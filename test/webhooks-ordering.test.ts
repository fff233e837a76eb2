// Ordered webhooks (docs/webhooks.md, "Ordered delivery"): the events of one
// inbound message (its `inbound.received` from ingest and from each retry)
// reach an ordered webhook in the order they happened; a failing one holds
// back only its own key, and releases the next when it fails for good. Also:
// deleting a webhook while an attempt to it is in flight (docs/webhooks.md,
// "Delivery") leaves no error behind.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { enroll, forward, inboundMeta, registerDomain } from './support/relay.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from './support/webhook-receiver.js';

const DOMAIN = 'ordered-acme.test';
const RETRY_DELAY_MS = 1500;
const env = useTenantStack({
  settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SERVICE_WEBHOOK_RETRY_DELAY: `${RETRY_DELAY_MS}ms`, SERVICE_WEBHOOK_TIMEOUT: '2s' },
  captureLogs: true,
  keys: { hooks: ['webhooks:read', 'webhooks:write', 'webhooks:delete', 'inbound:write', 'inbound:read', 'relay:write'] },
});
let receiver: WebhookReceiver;
let node: { token: string };

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  await registerDomain(env.stack, env.tenant.project.id, DOMAIN);
  node = await enroll(env.stack, env.keys.hooks);
});
afterAll(async () => { await receiver?.close(); });
afterEach(async () => {
  await env.stack.sql.query('DELETE FROM webhooks');
  receiver.clear();
  receiver.setFallback({ status: 200, body: 'ok' });
});

async function createWebhook(body: Record<string, unknown>) {
  const reply = await env.stack.call('POST', '/api/v1/webhooks', { token: env.keys.hooks, body });
  if (reply.status !== 201) throw new Error(`webhook creation failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.webhook as { id: string; url: string; ordered: boolean };
}

async function mailArrives(sender: string): Promise<string> {
  const meta = inboundMeta([`support@${DOMAIN}`], { mail_from: sender });
  const reply = await forward(env.stack, node.token, { meta, raw: `From: ${sender}\r\nSubject: s\r\n\r\nHello\r\n` });
  expect(reply.status).toBe(200);
  return reply.body.inbound_emails[0].id;
}

/** A later event of the same inbound message: the retry route emits `inbound.received` again. */
async function retried(id: string) {
  expect((await env.stack.call('POST', `/api/v1/inbound-emails/${id}/retry`, { token: env.keys.hooks })).status).toBe(200);
}

const deliveries = async (id: string) =>
  (await env.stack.call('GET', `/api/v1/webhooks/${id}/deliveries`, { token: env.keys.hooks })).body.deliveries as any[];
const quietFor = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Requests of one inbound message (its key), in arrival order, as [event time, delivery id]. */
const ofKey = (reqs: ReceivedRequest[], id: string) => reqs.filter((r) => r.body.data.id === id);

describe('an ordered webhook', () => {
  test('keeps the events of one message in order while its first one is retried; another message flows meanwhile', async () => {
    const hook = await createWebhook({ url: `${receiver.url}/ordered`, events: ['inbound.received'], ordered: true });
    expect(hook.ordered).toBe(true);
    receiver.answer({ status: 500, body: 'not yet' });
    const x = await mailArrives('xavier@example.com');
    await eventually(async () => receiver.received(), (r) => r.length === 1);
    // Two later events of x, made while x's first waits for its retry.
    await retried(x);
    await retried(x);
    const y = await mailArrives('yvonne@example.com');

    const reqs = await eventually(async () => receiver.received(), (r) => r.length === 5, 10_000);
    await quietFor(300);
    expect(receiver.received()).toHaveLength(5);
    // y went at once, before x's retry: a failing key holds back only itself.
    expect(reqs[1]!.body.data.id).toBe(y);
    expect(reqs[1]!.receivedAt - reqs[0]!.receivedAt).toBeLessThan(RETRY_DELAY_MS);
    const xs = ofKey(reqs, x);
    expect(xs).toHaveLength(4);
    // The first event twice (500, then its retry), then the second and third, in the order they happened.
    expect(xs[0]!.headers['x-service-delivery-id']).toBe(xs[1]!.headers['x-service-delivery-id']);
    expect(xs[1]!.receivedAt - xs[0]!.receivedAt).toBeGreaterThanOrEqual(RETRY_DELAY_MS - 50);
    const times = xs.slice(1).map((r) => Date.parse(r.body.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(new Set(xs.slice(1).map((r) => r.headers['x-service-delivery-id'])).size).toBe(3);
    const list = await eventually(() => deliveries(hook.id), (d) => d.length === 4 && d.every((e) => e.status === 'succeeded'));
    expect(list.filter((d) => d.data.id === x).map((d) => d.attempts).sort()).toEqual([1, 1, 2]);
  });

  test('a head that fails for good (attempts ran out) releases the next event of its key', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['inbound.received'], ordered: true });
    receiver.answer({ status: 503 }, { status: 503 }, { status: 503 });
    const x = await mailArrives('zoe@example.com');
    await eventually(async () => receiver.received(), (r) => r.length === 1);
    await retried(x);
    const reqs = await eventually(async () => receiver.received(), (r) => r.length === 4, 4 * RETRY_DELAY_MS + 5_000);
    // Three attempts of the first, then the second: never before the first failed for good.
    expect(new Set(reqs.slice(0, 3).map((r) => r.headers['x-service-delivery-id'])).size).toBe(1);
    expect(reqs[3]!.headers['x-service-delivery-id']).not.toBe(reqs[0]!.headers['x-service-delivery-id']);
    const list = await eventually(() => deliveries(hook.id), (d) => d.length === 2 && d.every((e) => e.status !== 'pending'));
    const [second, first] = list;
    expect(first).toMatchObject({ status: 'failed', attempts: 3 });
    expect(second).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(Date.parse(second.attempt_log[0].started_at)).toBeGreaterThanOrEqual(Date.parse(first.completed_at) - 5);
  });

  test('an unordered webhook on the same events is not held back', async () => {
    const unordered = await startWebhookReceiver();
    try {
      await createWebhook({ url: receiver.url, events: ['inbound.received'], ordered: true });
      await createWebhook({ url: unordered.url, events: ['inbound.received'] });
      receiver.answer({ status: 500 });
      unordered.answer({ status: 500 });
      const x = await mailArrives('una@example.com');
      await eventually(async () => unordered.received(), (r) => r.length === 1);
      await retried(x);
      // The unordered one gets the second event at once, while the first waits for its retry.
      const [, second] = await eventually(async () => unordered.received(), (r) => r.length === 2, 1_000);
      expect(second!.headers['x-service-delivery-id']).not.toBe(unordered.received()[0]!.headers['x-service-delivery-id']);
      expect(receiver.received()).toHaveLength(1);
    } finally {
      await unordered.close();
    }
  });

  test('ordered must be a boolean: 400 naming it, nothing created', async () => {
    const reply = await env.stack.call('POST', '/api/v1/webhooks', { token: env.keys.hooks, body: { url: receiver.url, events: ['*'], ordered: 'yes' } });
    expect(reply.status).toBe(400);
    expect(reply.body.fields).toHaveProperty('ordered');
    expect(reply.body.error).toMatch(/ordered/);
    const list = await env.stack.call('GET', '/api/v1/webhooks', { token: env.keys.hooks });
    expect(list.body.webhooks).toEqual([]);
  });
});

describe('deleting a webhook while an attempt to it is in flight', () => {
  test('the delete and the attempt\'s record coexist: 204, nothing left, no foreign-key error logged', async () => {
    // A receiver that answers the first request 500 and holds the second until told.
    const held: ServerResponse[] = [];
    let count = 0;
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        count++;
        if (count === 1) res.writeHead(500).end('first');
        else held.push(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const locker = await env.stack.sql.connect();
    try {
      const hook = await createWebhook({ url, events: ['inbound.received'] });
      await mailArrives('quinn@example.com');
      // The first attempt recorded, the second in flight.
      await eventually(async () => held.length, (n) => n === 1, 10_000);
      const { rows: [first] } = await env.stack.sql.query(
        'SELECT a.id, a.delivery_id FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id WHERE d.webhook_id = $1', [hook.id]);
      expect(first).toBeDefined();

      // The delete gets as far as removing the delivery, then waits on a lock this test holds on its first attempt row:
      // the in-flight attempt is recorded exactly while the delete is under way.
      await locker.query('BEGIN');
      await locker.query('SELECT 1 FROM webhook_attempts WHERE id = $1 FOR UPDATE', [first.id]);
      const deleting = env.stack.call('DELETE', `/api/v1/webhooks/${hook.id}`, { token: env.keys.hooks });
      const waiting = (text: string) => eventually(async () => Number((await env.stack.sql.query(
        `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ILIKE $1`, [`%${text}%`])).rows[0].n), (n) => n >= 1, 10_000);
      await waiting('delete from "webhooks"');
      held[0]!.writeHead(200).end('late');
      await waiting('webhook_attempts');
      await locker.query('COMMIT');

      expect((await deleting).status).toBe(204);
      await quietFor(500);
      expect((await env.stack.sql.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [hook.id])).rows[0].n).toBe(0);
      expect((await env.stack.sql.query('SELECT count(*)::int AS n FROM webhook_attempts WHERE delivery_id = $1', [first.delivery_id])).rows[0].n).toBe(0);
      const errors = env.stack.logs().filter((l: any) => /foreign key|23503/i.test(JSON.stringify(l)));
      expect(errors).toEqual([]);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
      locker.release();
      for (const res of held) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
