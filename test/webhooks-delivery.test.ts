// Webhook delivery end to end: events written by the real ingest path and the
// inbound retry route, handed to the WebhookDispatcher Durable Object in local
// workerd, POSTed to a real HTTP receiver on loopback. Signatures are checked
// with Node's own crypto, not the project's helper.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startDohResponder, type DohResponder } from './support/doh-responder.js';
import { enroll, forward, inboundMeta, registerDomain } from './support/relay.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type ReceivedRequest, type WebhookReceiver } from './support/webhook-receiver.js';

const DOMAIN = 'hooks-acme.test';
const RETRY_DELAY_MS = 1000;
const SETTINGS = {
  SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  SERVICE_WEBHOOK_RETRY_DELAY: `${RETRY_DELAY_MS}ms`,
  SERVICE_WEBHOOK_TIMEOUT: '1s',
};

const env = useTenantStack({ settings: SETTINGS, keys: { hooks: ['webhooks:read', 'webhooks:write', 'webhooks:delete', 'inbound:write', 'inbound:read', 'relay:write'] } });
let receiver: WebhookReceiver;
let node: { token: string };

beforeAll(async () => {
  receiver = await startWebhookReceiver();
  await registerDomain(env.stack, env.tenant.project.id, DOMAIN);
  node = await enroll(env.stack, env.keys.hooks);
});
afterAll(async () => { await receiver?.close(); });
afterEach(async () => {
  // Each test starts with no webhooks and a receiver that answers 200.
  await env.stack.sql.query('DELETE FROM webhooks');
  receiver.clear();
  receiver.setFallback({ status: 200, body: 'ok' });
});

async function createWebhook(body: Record<string, unknown>, stack: TestStack = env.stack, token = env.keys.hooks) {
  const reply = await stack.call('POST', '/api/v1/webhooks', { token, body });
  if (reply.status !== 201) throw new Error(`webhook creation failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.webhook as { id: string; secret: string; url: string };
}

/** Mail from `sender` stored through the relay channel, as a node forwards it; its record id. */
async function mailArrives(sender: string, subject = `s-${crypto.randomUUID().slice(0, 8)}`): Promise<string> {
  const meta = inboundMeta([`support@${DOMAIN}`], { mail_from: sender });
  meta.parsed.subject = subject;
  const reply = await forward(env.stack, node.token, { meta, raw: `From: ${sender}\r\nSubject: ${subject}\r\n\r\nHello\r\n` });
  expect(reply.status).toBe(200);
  return reply.body.inbound_emails[0].id;
}

/** Node's HMAC over `<timestamp>.<raw body>`, compared in constant time: the receiver recipe, independently. */
function signatureValid(req: ReceivedRequest, secret: string): boolean {
  const timestamp = String(req.headers['x-service-timestamp']);
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${timestamp}.`).update(req.raw).digest('hex')}`);
  const given = Buffer.from(String(req.headers['x-service-signature']));
  return given.length === expected.length && timingSafeEqual(given, expected);
}

const deliveries = async (webhookId: string, token = env.keys.hooks) => {
  const reply = await env.stack.call('GET', `/api/v1/webhooks/${webhookId}/deliveries`, { token });
  expect(reply.status).toBe(200);
  return reply.body.deliveries as any[];
};

const received = (n: number, timeoutMs = 5_000) => eventually(async () => receiver.received(), (r) => r.length >= n, timeoutMs);

/** Waits long enough for any further attempt to have happened. */
const quietFor = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('a delivery', () => {
  // How fast is `pnpm bench webhooks`'s to say (p99 42 ms at 100 events/s); a shared CI machine is no clock.
  test('mail from a filtered domain reaches the receiver, signed, with the documented headers and envelope', async () => {
    const hook = await createWebhook({ url: `${receiver.url}/hooks`, events: ['inbound.received'], filters: ['*@example.com'] });
    const id = await mailArrives('Ann@Example.com');
    const [req] = await received(1);
    expect(req!.method).toBe('POST');
    expect(req!.path).toBe('/hooks');
    expect(req!.headers['content-type']).toBe('application/json');
    expect(signatureValid(req!, hook.secret)).toBe(true);
    const timestamp = Number(req!.headers['x-service-timestamp']);
    expect(Math.abs(timestamp - Date.now() / 1000)).toBeLessThan(5);
    expect(req!.headers['x-service-event']).toBe('inbound.received');

    const envelope = req!.body;
    expect(Object.keys(envelope).sort()).toEqual(['data', 'event', 'timestamp']);
    expect(envelope.event).toBe('inbound.received');
    expect(new Date(envelope.timestamp).toISOString()).toBe(envelope.timestamp);
    expect(envelope.data).toMatchObject({ id, project_id: env.tenant.project.id, sender: 'Ann@Example.com', status: 'received' });
    // Metadata only.
    for (const field of ['text_body', 'html_body', 'headers']) expect(envelope.data).not.toHaveProperty(field);

    const [delivery] = await eventually(() => deliveries(hook.id), (d) => d[0]?.status === 'succeeded');
    expect(delivery).toMatchObject({ event: 'inbound.received', status: 'succeeded', attempts: 1, next_attempt_at: null });
    expect(delivery.attempt_log).toEqual([expect.objectContaining({ attempt: 1, status_code: 200, error: null, response_excerpt: 'ok' })]);
    expect(req!.headers['x-service-delivery-id']).toBe(delivery.id);
  });

  test('a signature made with another secret, or over re-encoded JSON, does not verify', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['*'] });
    await mailArrives('bob@example.com');
    const [req] = await received(1);
    expect(signatureValid(req!, hook.secret)).toBe(true);
    expect(signatureValid(req!, `${hook.secret}x`)).toBe(false);
    const reencoded = { ...req!, raw: Buffer.from(JSON.stringify(req!.body, null, 1)) };
    expect(signatureValid(reencoded, hook.secret)).toBe(false);
  });

  test('sender filters: exact addresses and *@domain, case-insensitive, against the bare envelope address; event types filter too', async () => {
    const byDomain = await createWebhook({ url: `${receiver.url}/domain`, events: ['inbound.received'], filters: ['*@Example.org'] });
    const exact = await createWebhook({ url: `${receiver.url}/exact`, events: ['inbound.received'], filters: ['carol@elsewhere.net'] });
    const all = await createWebhook({ url: `${receiver.url}/all`, events: ['*'] });
    await createWebhook({ url: `${receiver.url}/sent-only`, events: ['email.sent'] });
    await createWebhook({ url: `${receiver.url}/sub`, events: ['inbound.received'], filters: ['*@sub.example.org'] });

    await mailArrives('Dave@EXAMPLE.org');
    await mailArrives('CAROL@elsewhere.net');
    await mailArrives('eve@other.example');
    await received(5);
    await quietFor(500);
    const paths = receiver.received().map((r) => `${r.path} ${r.body.data.sender}`).sort();
    expect(paths).toEqual([
      '/all CAROL@elsewhere.net', '/all Dave@EXAMPLE.org', '/all eve@other.example',
      '/domain Dave@EXAMPLE.org',
      '/exact CAROL@elsewhere.net',
    ]);
    expect((await deliveries(byDomain.id)).length).toBe(1);
    expect((await deliveries(exact.id)).length).toBe(1);
    expect((await deliveries(all.id)).length).toBe(3);
  });

  test('the inbound retry route emits the event again, delivered with the same data', async () => {
    await createWebhook({ url: receiver.url, events: ['inbound.received'] });
    const id = await mailArrives('frank@example.com');
    await received(1);
    const retry = await env.stack.call('POST', `/api/v1/inbound-emails/${id}/retry`, { token: env.keys.hooks });
    expect(retry.status).toBe(200);
    const [first, second] = await received(2);
    expect(second!.body.data).toEqual(first!.body.data);
  });
});

describe('retries', () => {
  test('500, 500, 200: three attempts spaced by webhook.retry_delay, each with a fresh timestamp and signature, all recorded', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['inbound.received'] });
    receiver.answer({ status: 500, body: 'boom' }, { status: 500, body: 'boom again' }, { status: 200, body: 'fine' });
    await mailArrives('gina@example.com');
    const reqs = await received(3, 10_000);
    for (const r of reqs) expect(signatureValid(r, hook.secret)).toBe(true);
    expect(reqs[1]!.receivedAt - reqs[0]!.receivedAt).toBeGreaterThanOrEqual(RETRY_DELAY_MS - 50);
    expect(reqs[2]!.receivedAt - reqs[1]!.receivedAt).toBeGreaterThanOrEqual(RETRY_DELAY_MS - 50);
    // The same envelope each time; a fresh signature over a fresh timestamp.
    expect(new Set(reqs.map((r) => r.raw.toString())).size).toBe(1);
    expect(new Set(reqs.map((r) => r.headers['x-service-signature'])).size).toBe(3);
    expect(Number(reqs[2]!.headers['x-service-timestamp'])).toBeGreaterThan(Number(reqs[0]!.headers['x-service-timestamp']));

    const [delivery] = await eventually(() => deliveries(hook.id), (d) => d[0]?.status === 'succeeded');
    expect(delivery.attempts).toBe(3);
    expect(delivery.attempt_log.map((a: any) => [a.attempt, a.status_code, a.error, a.response_excerpt])).toEqual([
      [1, 500, 'receiver answered 500', 'boom'],
      [2, 500, 'receiver answered 500', 'boom again'],
      [3, 200, null, 'fine'],
    ]);
    for (const a of delivery.attempt_log) expect(a.duration_ms).toBeGreaterThanOrEqual(0);
  });

  test('attempts run out at webhook.max_attempts (3): the delivery is failed and nothing more is sent', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['inbound.received'] });
    receiver.setFallback({ status: 503, body: 'down' });
    await mailArrives('hank@example.com');
    await received(3, 10_000);
    const [delivery] = await eventually(() => deliveries(hook.id), (d) => d[0]?.status === 'failed');
    expect(delivery).toMatchObject({ attempts: 3, last_status_code: 503, last_error: 'receiver answered 503', next_attempt_at: null });
    expect(delivery.completed_at).not.toBeNull();
    await quietFor(RETRY_DELAY_MS * 2);
    expect(receiver.received()).toHaveLength(3);
  });

  test('a receiver that hangs past webhook.timeout, closes the connection, or redirects is a failed attempt; the redirect is not followed', async () => {
    const attacker = await startWebhookReceiver();
    try {
      const hook = await createWebhook({ url: receiver.url, events: ['inbound.received'] });
      receiver.answer({ hang: true }, { drop: true }, { status: 301, headers: { location: `${attacker.url}/steal` } });
      await mailArrives('ivan@example.com');
      const [delivery] = await eventually(() => deliveries(hook.id), (d) => d[0]?.status === 'failed', 15_000);
      const [hung, dropped, redirected] = delivery.attempt_log;
      expect(hung).toMatchObject({ status_code: null, error: 'no answer within 1000 ms' });
      expect(hung.duration_ms).toBeGreaterThanOrEqual(950);
      expect(dropped).toMatchObject({ status_code: null });
      expect(dropped.error).toMatch(/^request failed: /);
      expect(redirected).toMatchObject({ status_code: 301, error: `redirect to ${attacker.url}/steal not followed` });
      expect(attacker.received()).toHaveLength(0);
    } finally {
      await attacker.close();
    }
  });

  test('a webhook deleted while a retry is pending gets no further attempt', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['inbound.received'] });
    receiver.setFallback({ status: 500 });
    await mailArrives('judy@example.com');
    await received(1);
    expect((await env.stack.call('DELETE', `/api/v1/webhooks/${hook.id}`, { token: env.keys.hooks })).status).toBe(204);
    await quietFor(RETRY_DELAY_MS * 2.5);
    expect(receiver.received()).toHaveLength(1);
    expect((await env.stack.sql.query('SELECT count(*)::int AS n FROM webhook_deliveries WHERE webhook_id = $1', [hook.id])).rows[0].n).toBe(0);
  });

  test('a rotated secret signs from the next attempt on, pending retries included', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['inbound.received'] });
    receiver.answer({ status: 500 });
    await mailArrives('kate@example.com');
    const [first] = await received(1);
    const rotated = await env.stack.call('POST', `/api/v1/webhooks/${hook.id}/rotate-secret`, { token: env.keys.hooks });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.webhook.secret as string;
    expect(fresh).not.toBe(hook.secret);
    const [, retried] = await received(2);
    expect(signatureValid(first!, hook.secret)).toBe(true);
    expect(signatureValid(retried!, fresh)).toBe(true);
    expect(signatureValid(retried!, hook.secret)).toBe(false);
  });

  test('redelivery by hand sends the same envelope again as a new delivery', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['inbound.received'] });
    await mailArrives('liam@example.com');
    const [original] = await received(1);
    const [delivery] = await eventually(() => deliveries(hook.id), (d) => d[0]?.status === 'succeeded');
    const redo = await env.stack.call('POST', `/api/v1/webhooks/${hook.id}/deliveries/${delivery.id}/redeliver`, { token: env.keys.hooks });
    expect(redo.status).toBe(202);
    const [, again] = await received(2);
    expect(again!.raw.toString()).toBe(original!.raw.toString());
    expect(again!.headers['x-service-delivery-id']).toBe(redo.body.delivery.id);
    expect(signatureValid(again!, hook.secret)).toBe(true);
    const list = await eventually(() => deliveries(hook.id), (d) => d.length === 2 && d.every((x: any) => x.status === 'succeeded'));
    expect(list.find((d: any) => d.id === redo.body.delivery.id).redelivery_of).toBe(delivery.id);
  });
});

describe('the outbox sweep', () => {
  const runSweep = async () => env.stack.runCron('* * * * *');

  test('hands over a row an isolate never handed over, once, however often it runs', async () => {
    await createWebhook({ url: receiver.url, events: ['inbound.received'] });
    // As if the Worker died between the commit and its hand-over.
    const { rows: [row] } = await env.stack.sql.query(
      `INSERT INTO outbox (project_id, event, data, created_at) VALUES ($1, 'inbound.received', $2, now() - interval '10 seconds') RETURNING id`,
      [env.tenant.project.id, JSON.stringify({ id: crypto.randomUUID(), sender: 'stranded@example.com' })],
    );
    expect(await runSweep()).toBe(200);
    const [req] = await received(1);
    expect(req!.body.data.sender).toBe('stranded@example.com');
    expect(await runSweep()).toBe(200);
    await quietFor(500);
    expect(receiver.received()).toHaveLength(1);
    const { rows: [outbox] } = await env.stack.sql.query('SELECT handed_over_at FROM outbox WHERE id = $1', [row.id]);
    expect(outbox.handed_over_at).not.toBeNull();
  });

  test('leaves a row younger than its grace alone: the request that wrote it is still handing it over', async () => {
    await createWebhook({ url: receiver.url, events: ['inbound.received'] });
    await env.stack.sql.query(`INSERT INTO outbox (project_id, event, data) VALUES ($1, 'inbound.received', '{}')`, [env.tenant.project.id]);
    expect(await runSweep()).toBe(200);
    await quietFor(500);
    expect(receiver.received()).toHaveLength(0);
  });

  test('events racing the sweep are delivered exactly once each', async () => {
    await createWebhook({ url: receiver.url, events: ['inbound.received'] });
    const { rows } = await env.stack.sql.query(
      `INSERT INTO outbox (project_id, event, data, created_at)
       SELECT $1, 'inbound.received', jsonb_build_object('n', g), now() - interval '10 seconds' FROM generate_series(1, 20) g RETURNING id`,
      [env.tenant.project.id],
    );
    expect(rows).toHaveLength(20);
    await Promise.all([runSweep(), runSweep(), runSweep()]);
    await received(20);
    await quietFor(500);
    const ns = receiver.received().map((r) => r.body.data.n).sort((a, b) => a - b);
    expect(ns).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  });
});

describe('tenancy', () => {
  test('another project\'s webhooks are not told about this project\'s mail', async () => {
    const otherKey = await env.other.key(['webhooks:write']);
    await createWebhook({ url: `${receiver.url}/other`, events: ['*'] }, env.stack, otherKey.token);
    await createWebhook({ url: `${receiver.url}/mine`, events: ['*'] });
    await mailArrives('mona@example.com');
    await received(1);
    await quietFor(500);
    expect(receiver.received().map((r) => r.path)).toEqual(['/mine']);
  });
});

describe('a restart of the runtime', () => {
  let stack: TestStack;
  let persistDir: string;
  let hooks: string;
  let relay: { token: string };

  beforeAll(async () => {
    persistDir = mkdtempSync(join(tmpdir(), 'webhook-restart-'));
    stack = await startTestStack({ settings: { ...SETTINGS, SERVICE_WEBHOOK_RETRY_DELAY: '4s' }, persistTo: persistDir });
    const admin = await platformToken(stack);
    const tenant = await seedProject(stack, admin, 'restart');
    hooks = (await tenant.key(['webhooks:write', 'webhooks:read', 'relay:write'])).token;
    await registerDomain(stack, tenant.project.id, 'restart-acme.test');
    relay = await enroll(stack, hooks);
  });
  afterAll(async () => {
    await stack?.stop();
    if (persistDir) rmSync(persistDir, { recursive: true, force: true });
  });

  test('a retry scheduled before the restart still happens after it', async () => {
    const hook = await createWebhook({ url: receiver.url, events: ['inbound.received'] }, stack, hooks);
    receiver.answer({ status: 500 });
    const meta = inboundMeta(['support@restart-acme.test'], { mail_from: 'nina@example.com' });
    expect((await forward(stack, relay.token, { meta, raw: 'Subject: x\r\n\r\nx\r\n' })).status).toBe(200);
    await received(1);
    // The failed attempt is recorded, its retry scheduled.
    await eventually(async () => (await stack.sql.query(`SELECT status_code FROM webhook_attempts`)).rows, (r) => r.length === 1);
    const restarting = Date.now();
    await stack.restart();
    const [, retried] = await received(2, 15_000);
    // Made by the new runtime: only its stored alarm knew of the retry.
    expect(retried!.receivedAt).toBeGreaterThan(restarting);
    expect(retried!.receivedAt - receiver.received()[0]!.receivedAt).toBeGreaterThanOrEqual(4000 - 50);
    expect(signatureValid(retried!, hook.secret)).toBe(true);
    const reply = await stack.call('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { token: hooks });
    expect(reply.body.deliveries[0]).toMatchObject({ status: 'succeeded', attempts: 2 });
  });

  test('an attempt cut off by a restart is made again when its lease ends (2 × webhook.timeout + 5 s)', async () => {
    await stack.sql.query('DELETE FROM webhooks');
    receiver.clear();
    const hook = await createWebhook({ url: receiver.url, events: ['inbound.received'] }, stack, hooks);
    // The receiver holds the first request past the restart: the old runtime never records it.
    receiver.answer({ hang: true });
    const meta = inboundMeta(['support@restart-acme.test'], { mail_from: 'pia@example.com' });
    expect((await forward(stack, relay.token, { meta, raw: 'Subject: y\r\n\r\ny\r\n' })).status).toBe(200);
    const [first] = await received(1);
    await stack.restart();
    const [, again] = await received(2, 20_000);
    // The lease: 2 × 1 s + 5 s from the claim, just before the first request.
    expect(again!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(7000 - 500);
    expect(again!.headers['x-service-delivery-id']).toBe(first!.headers['x-service-delivery-id']);
    const [delivery] = await eventually(
      async () => (await stack.call('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { token: hooks })).body.deliveries,
      (d: any[]) => d[0]?.status === 'succeeded',
    );
    // The cut-off attempt left no record; the second is numbered 2.
    expect(delivery.attempts).toBe(2);
    expect(delivery.attempt_log.map((a: any) => [a.attempt, a.status_code])).toEqual([[2, 200]]);
  });
});

describe('private targets at delivery', () => {
  let stack: TestStack;
  let doh: DohResponder;
  let hooks: string;
  let relay: { token: string };

  beforeAll(async () => {
    doh = await startDohResponder();
    stack = await startTestStack({ settings: { SERVICE_WEBHOOK_RETRY_DELAY: '500ms', SERVICE_WEBHOOK_TIMEOUT: '1s', SERVICE_DNS_DOH_URL: doh.url } });
    const admin = await platformToken(stack);
    const tenant = await seedProject(stack, admin, 'rebind');
    hooks = (await tenant.key(['webhooks:write', 'webhooks:read', 'relay:write'])).token;
    await registerDomain(stack, tenant.project.id, 'rebind-acme.test');
    relay = await enroll(stack, hooks);
  });
  afterAll(async () => {
    await stack?.stop();
    await doh?.close();
  });

  test('a name that resolved to a public address at create and to a private one later is refused at every attempt', async () => {
    doh.set('hooks.rebind.example', 'A', ['93.184.216.34']);
    const hook = await createWebhook({ url: 'http://hooks.rebind.example/in', events: ['inbound.received'] }, stack, hooks);
    // DNS changes after the check at create (a rebinding attack, or a moved host).
    doh.set('hooks.rebind.example', 'A', ['169.254.169.254']);
    const meta = inboundMeta(['support@rebind-acme.test'], { mail_from: 'oscar@example.com' });
    expect((await forward(stack, relay.token, { meta, raw: 'Subject: x\r\n\r\nx\r\n' })).status).toBe(200);
    const reply = await eventually(
      () => stack.call('GET', `/api/v1/webhooks/${hook.id}/deliveries`, { token: hooks }),
      (r) => r.body.deliveries[0]?.status === 'failed', 10_000,
    );
    const [delivery] = reply.body.deliveries;
    expect(delivery.attempt_log).toHaveLength(3);
    for (const a of delivery.attempt_log) {
      expect(a).toMatchObject({ status_code: null, error: 'target refused: hooks.rebind.example resolves to 169.254.169.254, a private address (link-local)' });
    }
    // Each attempt asked again.
    expect(doh.queries().filter((q) => q.name === 'hooks.rebind.example' && q.type === 'A').length).toBeGreaterThanOrEqual(4);
  });
});
