// `pnpm bench webhooks`: how fast events become signed POSTs at a receiver.
// A throwaway local stack, a tenant with N webhooks pointing at a Node receiver
// on loopback, and events written at a fixed rate through the real event path
// (`POST /api/v1/inbound-emails/{id}/retry`: an outbox row, then the hand-over
// to the WebhookDispatcher). Latency is from the event's commit (the envelope's
// `timestamp`, the outbox row's `created_at`) to the receiver reading the request.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import pg from 'pg';
import { repoRoot } from '../edge/local/edge-worker.js';
import type { Stack } from '../edge/local/stack.js';
import { numberFlags } from './args.js';
import { bootstrap, withStack } from './support/stack.js';

const DEFAULTS = { rate: 100, seconds: 10, 'wide-rate': 10, 'wide-webhooks': 50 };
const GOAL_P99_MS = 500;

const SETTINGS = {
  SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  SERVICE_RATELIMIT_API_PER_MINUTE: '1000000000',
};

interface Scenario { webhooks: number; rate: number; seconds: number }

interface ScenarioResult extends Scenario {
  events: number;
  expected: number;
  delivered: number;
  /** Deliveries per second, from the first event written to the last delivery. */
  deliveriesPerSecond: number;
  latency: { p50: number; p99: number; max: number };
  /** The event-writing request's own response time: the baseline. */
  write: { p50: number; p99: number };
  signaturesChecked: number;
}

export async function runWebhooksBench(argv: string[]): Promise<void> {
  const flags = numberFlags(argv, DEFAULTS);
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  const scenarios: Scenario[] = [
    { webhooks: 1, rate: flags.rate, seconds: flags.seconds },
    { webhooks: flags['wide-webhooks'], rate: flags['wide-rate'], seconds: flags.seconds },
  ];
  console.error(`bench webhooks: ${scenarios.map((s) => `${s.webhooks} webhook(s) at ${s.rate} events/s`).join(', then ')}, ${flags.seconds}s each`);

  const results = await withStack(SETTINGS, async (stack) => {
    const tenant = await bootstrap(stack);
    const key = await createKey(stack, tenant.platformToken, tenant.projectId);
    const inboundId = await seedInboundEmail(stack.databaseUrl, tenant.projectId);
    const out: ScenarioResult[] = [];
    for (const scenario of scenarios) out.push(await runScenario(stack, key, inboundId, scenario));
    return out;
  });

  console.log('');
  console.log('| webhooks | events/s asked | events | deliveries | deliveries/s | p50 ms | p99 ms | max ms | write p50 ms | write p99 ms |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(`| ${r.webhooks} | ${r.rate} | ${r.events} | ${r.delivered}/${r.expected} | ${r.deliveriesPerSecond.toFixed(0)} | ${r.latency.p50.toFixed(0)} | ${r.latency.p99.toFixed(0)} | ${r.latency.max.toFixed(0)} | ${r.write.p50.toFixed(0)} | ${r.write.p99.toFixed(0)} |`);
  }
  const main = results[0]!;
  const pass = main.delivered === main.expected && main.latency.p99 < GOAL_P99_MS;
  console.log('');
  console.log(`event → receiver p99 / event-writing request p99 (baseline, same run): ${(main.latency.p99 / main.write.p99).toFixed(2)}×`);
  console.log(`goal: p99 event → receiver under ${GOAL_P99_MS} ms at ${main.rate} events/s with 1 webhook: ${pass ? 'PASS' : 'BELOW'} (${main.latency.p99.toFixed(0)} ms)`);
  console.log(`signatures verified at the receiver: ${results.reduce((n, r) => n + r.signaturesChecked, 0)} (each delivery's HMAC recomputed with node:crypto)`);
  const loadAfter = os.loadavg();
  console.log(`machine: ${os.cpus().length} cpus, load average ${loadBefore.map((l) => l.toFixed(2)).join(' ')} before, ${loadAfter.map((l) => l.toFixed(2)).join(' ')} after`);

  const file = `${repoRoot}bench/results/webhooks-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`;
  mkdirSync(`${repoRoot}bench/results`, { recursive: true });
  writeFileSync(file, `${JSON.stringify({ benchmark: 'webhooks', startedAt: startedAt.toISOString(), options: flags, goal: { p99Ms: GOAL_P99_MS, pass }, results }, null, 2)}\n`);
  console.log(`results: ${file.slice(repoRoot.length)}`);
}

async function runScenario(stack: Stack, key: string, inboundId: string, scenario: Scenario): Promise<ScenarioResult> {
  const receiver = await startReceiver();
  const ids: string[] = [];
  try {
    for (let i = 0; i < scenario.webhooks; i++) {
      const { webhook } = await api<{ webhook: { id: string; secret: string } }>(stack, 'POST', '/api/v1/webhooks', key, {
        url: `${receiver.url}/hook/${i}`, events: ['inbound.received'],
      });
      ids.push(webhook.id);
      receiver.secrets.set(`/hook/${i}`, webhook.secret);
    }
    // Unmeasured warm-up: the Worker's and the dispatcher's first requests compile and connect.
    for (let i = 0; i < WARMUP_EVENTS; i++) await writeEvent(stack, key, inboundId);
    const warmDeadline = Date.now() + 30_000;
    while (receiver.arrivals.length < WARMUP_EVENTS * scenario.webhooks && Date.now() < warmDeadline) await new Promise((r) => setTimeout(r, 50));
    receiver.arrivals.length = 0;

    console.error(`  ${scenario.webhooks} webhook(s), ${scenario.rate} events/s for ${scenario.seconds}s…`);
    const events = Math.round(scenario.rate * scenario.seconds);
    const expected = events * scenario.webhooks;
    const writes: number[] = [];
    const started = performance.now();
    const firstAt = Date.now();
    const pending: Promise<void>[] = [];
    // Open loop: each event is written at its own time, whether or not earlier ones have answered.
    for (let i = 0; i < events; i++) {
      const due = started + (i * 1000) / scenario.rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      pending.push((async () => {
        const t0 = performance.now();
        await writeEvent(stack, key, inboundId);
        writes.push(performance.now() - t0);
      })());
    }
    await Promise.all(pending);
    const deadline = Date.now() + 60_000;
    while (receiver.arrivals.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const lastAt = Math.max(...receiver.arrivals.map((a) => a.at));
    const latencies = receiver.arrivals.map((a) => a.latencyMs).sort((a, b) => a - b);
    const sortedWrites = writes.sort((a, b) => a - b);
    if (receiver.badSignatures) throw new Error(`${receiver.badSignatures} deliveries carried a signature that did not verify`);
    return {
      ...scenario, events, expected, delivered: receiver.arrivals.length,
      deliveriesPerSecond: receiver.arrivals.length / ((lastAt - firstAt) / 1000),
      latency: { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies.at(-1) ?? NaN },
      write: { p50: quantile(sortedWrites, 0.5), p99: quantile(sortedWrites, 0.99) },
      signaturesChecked: receiver.arrivals.length,
    };
  } finally {
    for (const id of ids) await api(stack, 'DELETE', `/api/v1/webhooks/${id}`, key).catch(() => {});
    await receiver.close();
  }
}

const WARMUP_EVENTS = 30;

async function writeEvent(stack: Stack, key: string, inboundId: string): Promise<void> {
  const res = await fetch(`${stack.url}/api/v1/inbound-emails/${inboundId}/retry`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`the event-writing request answered ${res.status}`);
}

const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);

interface Receiver {
  url: string;
  secrets: Map<string, string>;
  arrivals: { at: number; latencyMs: number }[];
  badSignatures: number;
  close(): Promise<void>;
}

/** Answers 204 at once; checks each signature with node:crypto and notes the latency from the envelope's timestamp. */
async function startReceiver(): Promise<Receiver> {
  const { createHmac, timingSafeEqual } = await import('node:crypto');
  const receiver: Omit<Receiver, 'url' | 'close'> = { secrets: new Map(), arrivals: [], badSignatures: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const raw = Buffer.concat(chunks);
      res.writeHead(204).end();
      const secret = receiver.secrets.get(req.url ?? '') ?? '';
      const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(`${req.headers['x-service-timestamp']}.`).update(raw).digest('hex')}`);
      const given = Buffer.from(String(req.headers['x-service-signature']));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) receiver.badSignatures++;
      const { timestamp } = JSON.parse(raw.toString('utf8')) as { timestamp: string };
      receiver.arrivals.push({ at, latencyMs: at - Date.parse(timestamp) });
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(receiver, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  });
}

async function createKey(stack: Stack, platformToken: string, projectId: string): Promise<string> {
  const res = await fetch(`${stack.url}/api/v1/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${platformToken}`, 'X-Service-Project-Id': projectId, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench-webhooks', permissions: ['webhooks:read', 'webhooks:write', 'webhooks:delete', 'inbound:write'] }),
  });
  if (res.status !== 201) throw new Error(`key creation answered ${res.status}`);
  return ((await res.json()) as { token: string }).token;
}

/** One stored inbound email whose retry route writes the events (stored directly: the bench is about delivery). */
async function seedInboundEmail(databaseUrl: string, projectId: string): Promise<string> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows: [row] } = await client.query(
      `INSERT INTO inbound_emails (project_id, spool_id, sender, recipients, subject, auth, size, status, received_at)
       VALUES ($1, 'bench-webhooks', 'ann@example.org', '{support@bench.test}', 'Bench', $2, 100, 'received', now()) RETURNING id`,
      [projectId, JSON.stringify({ spf: 'pass', dkim: 'pass', dmarc: 'pass', aligned: true, client_ip: '203.0.113.9' })],
    );
    return row.id as string;
  } finally {
    await client.end();
  }
}

async function api<T = unknown>(stack: Stack, method: string, path: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}
