// The load client of `pnpm bench console`'s stream half, in a process of its
// own (the bench process runs the Neon bridge, whose event loop it must not
// share). It follows GET /app/api/events as a browser would (fetch, the body
// parsed as SSE), receives the same events as a webhook (the baseline: the
// webhooks goal is the same p99 < 500 ms), and writes events at a fixed rate,
// open loop. Latency is from the event's commit (`at` in the stream's data,
// the envelope's `timestamp`: the outbox row's created_at) to the moment each
// side reads it here.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { openSse, type SseEvent } from '../../test/support/sse.js';
import { writeOpenLoop } from '../support/event-load.js';

export interface StreamLoadStart {
  workerUrl: string;
  /** The signed-in browser's cookie (`__Host-edgemail_session=…`). */
  cookie: string;
  key: string;
  /** The inbound email whose retry route writes each event. */
  inboundId: string;
  rate: number;
  seconds: number;
  warmupEvents: number;
}

export interface Quantiles { p50: number; p99: number; max: number }

export interface StreamLoadFigures {
  events: number;
  /** `inbound.received` events the stream carried during the measured run. */
  streamed: number;
  /** Webhook deliveries of the same events. */
  delivered: number;
  /** Ids of the stream's events during the run, checked to have no gap or repeat. */
  idGaps: number;
  stream: Quantiles;
  webhook: Quantiles;
  /** The event-writing request's own response time. */
  write: { p50: number; p99: number };
  /** Stream events of any kind per second during the run (each retry also writes an `audit` event). */
  streamEventsPerSecond: number;
}

export type StreamLoadReport = { figures: StreamLoadFigures } | { error: string };

const send = (m: unknown) => { if (process.connected) process.send!(m); };
const quantile = (sorted: number[], q: number) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN);
const quantiles = (values: number[]): Quantiles => {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted.at(-1) ?? NaN };
};

const webhookArrivals: number[] = [];
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const at = Date.now();
    res.writeHead(204).end();
    webhookArrivals.push(at - Date.parse((JSON.parse(Buffer.concat(chunks).toString('utf8')) as { timestamp: string }).timestamp));
  });
});
server.keepAliveTimeout = 60_000;

async function writeEvent(start: StreamLoadStart): Promise<void> {
  const res = await fetch(`${start.workerUrl}/api/v1/inbound-emails/${start.inboundId}/retry`, { method: 'POST', headers: { authorization: `Bearer ${start.key}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`the event-writing request answered ${res.status}: ${text.slice(0, 300)}`);
}

async function until(done: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

async function run(start: StreamLoadStart): Promise<StreamLoadFigures> {
  // Each event's arrival here, stamped as the parser hands it over.
  const arrivals = new Map<SseEvent, number>();
  const stream = await openSse(`${start.workerUrl}/app/api/events`, { cookie: start.cookie }, (e) => arrivals.set(e, Date.now()));
  if (stream.status !== 200) throw new Error(`GET /app/api/events answered ${stream.status}`);
  const inbound = () => stream.events.filter((e) => e.event === 'inbound.received');
  try {
    // Unmeasured warm-up: the Worker's, the dispatcher's and the stream's first calls compile and connect.
    for (let i = 0; i < start.warmupEvents; i++) await writeEvent(start);
    await until(() => inbound().length >= start.warmupEvents && webhookArrivals.length >= start.warmupEvents, 30_000);
    const skip = stream.events.length;
    webhookArrivals.length = 0;

    const events = Math.round(start.rate * start.seconds);
    const { writes, firstAt } = await writeOpenLoop(events, start.rate, () => writeEvent(start));
    await until(() => inbound().length - start.warmupEvents >= events && webhookArrivals.length >= events, 60_000);
    await new Promise((r) => setTimeout(r, 20));

    const measured = stream.events.slice(skip);
    const ids = measured.map((e) => Number(e.id));
    const idGaps = ids.filter((id, i) => i > 0 && id !== ids[i - 1]! + 1).length;
    const streamed = measured.filter((e) => e.event === 'inbound.received');
    const latencies = streamed.map((e) => (arrivals.get(e) ?? Date.now()) - Date.parse((JSON.parse(e.data) as { at: string }).at));
    const lastAt = Math.max(...measured.map((e) => arrivals.get(e) ?? Date.now()));
    return {
      events, streamed: streamed.length, delivered: webhookArrivals.length, idGaps,
      stream: quantiles(latencies), webhook: quantiles(webhookArrivals),
      write: quantiles(writes),
      streamEventsPerSecond: measured.length / ((lastAt - firstAt) / 1000),
    };
  } finally {
    stream.close();
  }
}

server.listen(0, '127.0.0.1', () => {
  send({ receiverUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  process.once('message', (start: StreamLoadStart) => {
    run(start).then(
      (figures) => send({ figures } satisfies StreamLoadReport),
      (e: unknown) => send({ error: e instanceof Error ? e.message : String(e) } satisfies StreamLoadReport),
    ).finally(() => server.close());
  });
});
process.once('disconnect', () => process.exit(0));
