// The load client of `pnpm bench webhooks`, in a process of its own: it
// receives the webhooks (answering 204 at once, checking every signature with
// node:crypto) and writes the events at a fixed rate, open loop. Latency is
// from the event's commit (the envelope's `timestamp`) to the request read here.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeOpenLoop } from './event-load.js';

export interface WebhookLoadStart {
  workerUrl: string;
  key: string;
  /** The inbound email whose retry route writes each event. */
  inboundId: string;
  rate: number;
  seconds: number;
  webhooks: number;
  warmupEvents: number;
  /** Receiver path → that webhook's secret. */
  secrets: Record<string, string>;
}

export interface WebhookLoadFigures {
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

export type WebhookLoadReport = { figures: WebhookLoadFigures; badSignatures: number } | { error: string };

const send = (m: unknown) => { if (process.connected) process.send!(m); };
const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);

let secrets: Record<string, string> = {};
const arrivals: { at: number; latencyMs: number }[] = [];
let badSignatures = 0;

const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    res.writeHead(204).end();
    const raw = Buffer.concat(chunks);
    const expected = Buffer.from(`sha256=${createHmac('sha256', secrets[req.url ?? ''] ?? '').update(`${req.headers['x-service-timestamp']}.`).update(raw).digest('hex')}`);
    const given = Buffer.from(String(req.headers['x-service-signature']));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) badSignatures++;
    arrivals.push({ at, latencyMs: at - Date.parse((JSON.parse(raw.toString('utf8')) as { timestamp: string }).timestamp) });
  });
});
server.keepAliveTimeout = 60_000;

async function writeEvent(start: WebhookLoadStart): Promise<void> {
  const res = await fetch(`${start.workerUrl}/api/v1/inbound-emails/${start.inboundId}/retry`, { method: 'POST', headers: { authorization: `Bearer ${start.key}` } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`the event-writing request answered ${res.status}`);
}

async function waitFor(count: number, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (arrivals.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

async function run(start: WebhookLoadStart): Promise<WebhookLoadFigures> {
  secrets = start.secrets;
  // Unmeasured warm-up: the Worker's and the dispatcher's first requests compile and connect.
  for (let i = 0; i < start.warmupEvents; i++) await writeEvent(start);
  await waitFor(start.warmupEvents * start.webhooks, 30_000);
  arrivals.length = 0;

  const events = Math.round(start.rate * start.seconds);
  const expected = events * start.webhooks;
  // Open loop: each event is written at its own time, whether or not earlier ones have answered.
  const { writes, firstAt } = await writeOpenLoop(events, start.rate, () => writeEvent(start));
  await waitFor(expected, 60_000);
  const latencies = arrivals.map((a) => a.latencyMs).sort((a, b) => a - b);
  const lastAt = Math.max(...arrivals.map((a) => a.at));
  writes.sort((a, b) => a - b);
  return {
    events, expected, delivered: arrivals.length,
    deliveriesPerSecond: arrivals.length / ((lastAt - firstAt) / 1000),
    latency: { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), max: latencies.at(-1) ?? NaN },
    write: { p50: quantile(writes, 0.5), p99: quantile(writes, 0.99) },
    signaturesChecked: arrivals.length,
  };
}

server.listen(0, '127.0.0.1', () => {
  send({ receiverUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  process.once('message', (start: WebhookLoadStart) => {
    run(start).then(
      (figures) => send({ figures, badSignatures } satisfies WebhookLoadReport),
      (e: unknown) => send({ error: e instanceof Error ? e.message : String(e) } satisfies WebhookLoadReport),
    ).finally(() => server.close());
  });
});
process.once('disconnect', () => process.exit(0));
