// `pnpm bench send`: the two halves of sending.
// 1. The send API: accepted sends/s and latency of `POST /api/v1/emails/send`
//    against `GET /health` in the same run (autocannon, interleaved rounds).
// 2. Delivery: a queue of messages delivered by one and then two relay nodes
//    (child processes) to Postfix's smtp-sink, against Postfix relaying the
//    same number of messages from its own queue to the same sink.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import type { Stack } from '../edge/local/stack.js';
import { startDnsServer } from '../relay-node/test-support/dns-server.js';
import { numberFlags } from './args.js';
import { finishRun, startRun } from './support/results.js';
import { assertAll200, loadTarget, toRun } from './support/load.js';
import { countTransactions } from './support/transactions.js';
import { findPostfix, freePort, runSmtpSource, startPostfix, startSmtpSink, type PostfixTools } from './support/postfix.js';
import { startRelayNodeProcess, type RelayNodeProcess } from './support/relay-node-process.js';
import { call, mintKey, sql } from './support/api.js';
import { bootstrap, withStack } from './support/stack.js';
import { profiledWorker } from './support/worker-profile.js';
import type { RunResult, Target, TransactionCount } from './support/types.js';
import { LINKS_HTML, measureRedirect, startNodeSink, recordedClicks, REDIRECT_GOAL, TRACKED_DELIVERY_GOAL, TRACKING_SETTINGS, type RedirectFigures } from './send-tracking.js';

const DEFAULTS = { duration: 10, connections: 32, rounds: 2, warmup: 2, messages: 2000, concurrency: 20, nodes: 2 };
const API_GOAL = 0.35;
/** Sequential sends (and health requests) over which the database transactions per request are counted. */
const COUNTED_REQUESTS = 200;
const DELIVERY_GOAL = 0.7;
const FROM_DOMAIN = 'bench-send.test';
export const SINK_DOMAIN = 'sink.test';

export const SETTINGS = { SERVICE_RATELIMIT_API_PER_MINUTE: '1000000000', SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '1000000000', ...TRACKING_SETTINGS };

interface ApiFigures { name: string; requestsPerSecond: number; p50Ms: number; p99Ms: number; runs: RunResult[]; transactions: TransactionCount }
export interface DeliveryFigures {
  name: string; messages: number; seconds: number; perSecond: number;
  /** The relay nodes' CPU time (user + system, every thread) over the timed part, ms per message delivered. */
  cpuMsPerMessage?: number;
  /**
   * The same split by thread (Linux), ms per message: the main thread (SMTP sessions, the edge's claims and
   * reports), the compose workers (composing and DKIM-signing), the rest (libuv's pool, GC helpers, the
   * module loader, the verification workers).
   */
  cpuSplit?: { main: number; compose: number; other: number };
  /** Recipients `sent` in all, start-up included (the timed ones are `messages`), of `queued`. */
  sent?: number; queued?: number;
  note?: string;
}

export async function runSendBench(argv: string[]): Promise<void> {
  // `--delivery-only`: the delivery half alone (while working on it).
  const deliveryOnly = argv.includes('--delivery-only');
  // `--tracking-only`: the tracking rows alone (the redirect against health; one node, plain and tracked).
  const trackingOnly = argv.includes('--tracking-only');
  const flags = numberFlags(argv.filter((a) => a !== '--delivery-only' && a !== '--tracking-only'), DEFAULTS);
  const clock = startRun();
  const postfix = findPostfix();
  console.error(`bench send: API ${flags.rounds} rounds × ${flags.duration}s, ${flags.connections} connections; delivery of ${flags.messages} messages`);

  const { api, redirect, clicksRecorded, delivery } = await withStack(SETTINGS, async (stack) => {
    const tenant = await bootstrap(stack);
    const key = await mintKey(stack, tenant.platformToken, tenant.projectId, ['emails:write', 'emails:read', 'domains:write', 'relay:write'], 'bench-send');
    await verifiedDomain(stack, key);
    const api = deliveryOnly || trackingOnly ? [] : await measureApi(stack, key, flags);
    if (trackingOnly) await queueMessages(stack, key, 1, 'tracking-only');
    // Open and click tracking: the redirect against /health (send-tracking.ts).
    const redirect: RedirectFigures[] = deliveryOnly && !trackingOnly ? [] : await measureRedirect(stack, flags);
    await new Promise((r) => setTimeout(r, 1000));
    const clicksRecorded = redirect.length ? await recordedClicks(stack) : 0;
    // The API half's sends are queued too: out of the way of the delivery half.
    await new Promise((r) => setTimeout(r, 1000));
    await clearEmails(stack);
    // Without Postfix only the tracking rows run (plain and tracked, one node), against a Node SMTP sink.
    const delivery = 'missing' in postfix
      ? { skipped: `Postfix rows skipped: ${postfix.missing}`, rows: await measureDelivery(stack, key, null, { ...flags, nodes: 1 }) }
      : { rows: await measureDelivery(stack, key, postfix, trackingOnly ? { ...flags, nodes: 1 } : flags, trackingOnly) };
    return { api, redirect, clicksRecorded, delivery };
  });

  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  let apiRatio: number | null = null;
  if (api.length) {
    console.log('');
    console.log('| API target | req/s | p50 ms | p99 ms | req/s per round |');
    console.log('|---|---|---|---|---|');
    for (const t of api) console.log(`| ${t.name} | ${t.requestsPerSecond.toFixed(0)} | ${t.p50Ms.toFixed(1)} | ${t.p99Ms.toFixed(1)} | ${t.runs.map((r) => r.requestsPerSecond.toFixed(0)).join(', ')} |`);
    apiRatio = api[1]!.requestsPerSecond / api[0]!.requestsPerSecond;
    console.log(`send / health throughput: ${pct(apiRatio)}; goal >= ${API_GOAL * 100}%: ${apiRatio >= API_GOAL ? 'PASS' : 'BELOW'}`);
    const [health, send] = [api[0]!.transactions, api[1]!.transactions];
    console.log(`database transactions per send request: ${send.perRequest.toFixed(2)} (health: ${health.perRequest.toFixed(2)})`);
    console.log(
      `  pg_stat_database over ${send.requests} sequential sends: ${send.transactions} commits+rollbacks, less ${send.sessions} ` +
      'for new bridge connections (as bench api counts). Expected: the key look-up, the send\'s one transaction and the ' +
      'audit write after the response, plus at most one last-used write per key per minute.',
    );
  }
  let redirectRatio: number | null = null;
  if (redirect.length) {
    console.log('');
    console.log('| tracking target | req/s | p50 ms | p99 ms | req/s per round |');
    console.log('|---|---|---|---|---|');
    for (const t of redirect) console.log(`| ${t.name} | ${t.requestsPerSecond.toFixed(0)} | ${t.p50Ms.toFixed(1)} | ${t.p99Ms.toFixed(1)} | ${t.runs.map((r) => r.requestsPerSecond.toFixed(0)).join(', ')} |`);
    redirectRatio = redirect[1]!.requestsPerSecond / redirect[0]!.requestsPerSecond;
    console.log(`tracked-link redirect / health throughput: ${pct(redirectRatio)}; goal >= ${REDIRECT_GOAL * 100}%: ${redirectRatio >= REDIRECT_GOAL ? 'PASS' : 'BELOW'}`);
    const answered = redirect[1]!.runs.reduce((n, r) => n + r.requests, 0);
    console.log(`clicks recorded by the batched writes: ${clicksRecorded} of ${answered} redirects answered in the timed rounds (warm-up clicks included)`);
  }
  let deliveryRatios: Record<string, number> = {};
  if ('skipped' in delivery) console.log(delivery.skipped);
  {
    const rows = delivery.rows;
    console.log('');
    console.log('| delivery to smtp-sink | messages timed | seconds | msg/s | node CPU ms/msg | main / compose / other | sent of queued |');
    console.log('|---|---|---|---|---|---|---|');
    for (const d of rows) {
      const cpu = d.cpuMsPerMessage === undefined ? '' : d.cpuMsPerMessage.toFixed(2);
      const sent = d.sent === undefined ? '' : `${d.sent} of ${d.queued}`;
      console.log(`| ${d.name} | ${d.messages} | ${d.seconds.toFixed(2)} | ${d.perSecond.toFixed(0)} | ${cpu} | ${cpuSplitText(d)} | ${sent}${d.note ? ` (${d.note})` : ''} |`);
    }
    const reference = rows.find((d) => d.name.startsWith('Postfix'));
    deliveryRatios = reference ? Object.fromEntries(rows.filter((d) => d !== reference).map((d) => [d.name, d.perSecond / reference.perSecond])) : {};
    for (const [name, ratio] of Object.entries(deliveryRatios)) {
      console.log(`${name} / Postfix: ${pct(ratio)}; goal >= ${DELIVERY_GOAL * 100}%: ${ratio >= DELIVERY_GOAL ? 'PASS' : 'BELOW'}`);
    }
    const plain = rows.find((d) => d.name.endsWith('(A B B A reference)'));
    const tracked = rows.find((d) => d.name.endsWith('tracking on'));
    if (plain && tracked) {
      deliveryRatios.tracked_over_plain = tracked.perSecond / plain.perSecond;
      console.log(`tracking on / plain, 1 relay node: ${pct(deliveryRatios.tracked_over_plain)}; goal >= ${TRACKED_DELIVERY_GOAL * 100}%: ${deliveryRatios.tracked_over_plain >= TRACKED_DELIVERY_GOAL ? 'PASS' : 'BELOW'}`);
    }
  }
  finishRun('send', clock, { options: flags, api, apiRatio, redirect, redirectRatio, clicksRecorded, delivery, deliveryRatios });
}

/** `main / compose / other` ms per message, or '' without the split. */
export function cpuSplitText(d: DeliveryFigures): string {
  return d.cpuSplit ? `${d.cpuSplit.main.toFixed(2)} / ${d.cpuSplit.compose.toFixed(2)} / ${d.cpuSplit.other.toFixed(2)}` : '';
}

// ---------------------------------------------------------------- the send API

async function measureApi(stack: Stack, key: string, flags: typeof DEFAULTS): Promise<ApiFigures[]> {
  const targets: Target[] = [
    { name: 'GET /health', path: '/health', requireAll200: true },
    {
      name: 'POST /api/v1/emails/send', path: '/api/v1/emails/send', method: 'POST', requireAll200: true,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ from: `Bench <news@${FROM_DOMAIN}>`, to: [`ann@${SINK_DOMAIN}`], subject: 'Bench', html: '<p>Hello from the bench.</p>', text: 'Hello from the bench.' }),
    },
  ];
  for (const t of targets) {
    console.error(`  warm-up ${t.name} (${flags.warmup}s)`);
    await loadTarget(stack, t, flags.warmup, flags.connections);
  }
  const runs = new Map<Target, RunResult[]>(targets.map((t) => [t, []]));
  for (let round = 1; round <= flags.rounds; round++) {
    for (const t of targets) {
      // The last round of each target under the Worker's profiler when BENCH_WORKER_CPU_PROF is set.
      const load = () => loadTarget(stack, t, flags.duration, flags.connections);
      const run = toRun(round, await (round === flags.rounds ? profiledWorker(stack, `send-api ${t.name}`, load) : load()));
      console.error(`  round ${round} ${t.name}: ${run.requestsPerSecond.toFixed(0)} req/s, p99 ${run.p99Ms} ms`);
      await assertAll200(stack, t, run);
      runs.get(t)!.push(run);
    }
  }
  const counted = new Map<Target, TransactionCount>();
  for (const t of targets) {
    console.error(`  counting transactions: ${COUNTED_REQUESTS} sequential ${t.name} requests`);
    counted.set(t, await countTransactions(stack, t, COUNTED_REQUESTS));
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return targets.map((t) => {
    const r = runs.get(t)!;
    return {
      name: t.name, requestsPerSecond: mean(r.map((x) => x.requestsPerSecond)), p50Ms: mean(r.map((x) => x.p50Ms)), p99Ms: mean(r.map((x) => x.p99Ms)), runs: r,
      transactions: counted.get(t)!,
    };
  });
}

// ---------------------------------------------------------------- delivery

async function measureDelivery(stack: Stack, key: string, tools: PostfixTools | null, flags: typeof DEFAULTS, noPostfix = false): Promise<DeliveryFigures[]> {
  const sink = tools ? await startSmtpSink(tools, await freePort()) : await startNodeSink();
  const dns = await startDnsServer({ [SINK_DOMAIN]: { MX: [{ preference: 10, exchange: `mx.${SINK_DOMAIN}` }] }, [`mx.${SINK_DOMAIN}`]: { A: ['127.0.0.1'] } });
  const nodeSettings = {
    // The sink is the recipients' MX, on loopback: allowed for the bench (refused by default).
    ...SETTINGS, SERVICE_DNS_SERVERS: dns.address, SERVICE_OUTBOUND_MX_PORT: String(sink.port), SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true',
    SERVICE_OUTBOUND_CONCURRENCY: String(flags.concurrency), SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '0',
  };
  const results: DeliveryFigures[] = [];
  try {
    // One node, then two (`--nodes 1`: one only).
    for (const nodes of [1, 2].filter((n) => n <= flags.nodes)) {
      console.error(`  queueing ${flags.messages} messages, then delivering with ${nodes} relay node(s)…`);
      const tag = `delivery-${nodes}`;
      await queueMessages(stack, key, flags.messages, tag);
      results.push(await deliverWithNodes(stack, key, nodes, nodeSettings, flags.messages, tag));
      await clearEmails(stack);
      if (nodes === 1) results.push(...await trackedAgainstPlain(stack, key, nodeSettings, flags.messages, results[results.length - 1]!));
    }
    if (tools && !noPostfix) {
      console.error(`  Postfix: queueing ${flags.messages} messages (held), then relaying them to the same sink…`);
      results.push(await postfixRelay(tools, sink.port, flags.messages));
    }
  } finally {
    await dns.close();
    await sink.stop();
  }
  return results;
}

/**
 * The same messages with open and click tracking on (every recipient's HTML rewritten at the claim), timed
 * A B B A against plain ones so that a shared machine's drift weighs on both alike: `plain` (A, already
 * run), two tracked runs of half the messages, then plain again. The rows: the tracked runs together, and
 * both plain runs together (the ratio's reference).
 */
async function trackedAgainstPlain(stack: Stack, key: string, settings: Record<string, string>, messages: number, plain: DeliveryFigures): Promise<DeliveryFigures[]> {
  const run = async (count: number, tracking: boolean, tag: string) => {
    console.error(`  queueing ${count} messages${tracking ? ' with tracking on' : ''}, then delivering with 1 relay node…`);
    await queueMessages(stack, key, count, tag, tracking ? { tracking: { opens: true, clicks: true } } : {});
    const figures = await deliverWithNodes(stack, key, 1, settings, count, tag);
    await clearEmails(stack);
    return figures;
  };
  const half = Math.max(1, Math.floor(messages / 2));
  const tracked = [await run(half, true, 'tracked-1'), await run(messages - half, true, 'tracked-2')];
  const again = await run(messages, false, 'plain-2');
  const merge = (name: string, rows: DeliveryFigures[]): DeliveryFigures => {
    const timed = rows.reduce((n, r) => n + r.messages, 0);
    const seconds = rows.reduce((n, r) => n + r.seconds, 0);
    const cpu = rows.reduce((n, r) => n + (r.cpuMsPerMessage ?? 0) * r.messages, 0);
    return { name, messages: timed, seconds, perSecond: timed / seconds, cpuMsPerMessage: timed ? cpu / timed : 0,
      sent: rows.reduce((n, r) => n + (r.sent ?? 0), 0), queued: rows.reduce((n, r) => n + (r.queued ?? 0), 0) };
  };
  return [merge('edgemail, 1 relay node, tracking on', tracked), merge('edgemail, 1 relay node, plain (A B B A reference)', [plain, again])];
}

/** Queues `count` single-recipient messages through the batch route (100 a request). */
export async function queueMessages(stack: Stack, key: string, count: number, tag: string, extra: Record<string, unknown> = {}): Promise<void> {
  for (let sent = 0; sent < count; sent += 100) {
    const n = Math.min(100, count - sent);
    const messages = Array.from({ length: n }, (_, i) => ({
      from: `Bench <news@${FROM_DOMAIN}>`, to: [`user${sent + i}@${SINK_DOMAIN}`], subject: `Bench ${sent + i}`,
      text: 'x'.repeat(2000), html: `<p>${'x'.repeat(2000)}</p><p>${LINKS_HTML}</p>`, tags: [tag], ...extra,
    }));
    await call(stack, 'POST', '/api/v1/emails/batch', key, { messages });
  }
}

export async function deliverWithNodes(stack: Stack, key: string, count: number, settings: Record<string, string>, messages: number, tag: string): Promise<DeliveryFigures> {
  const stateDirs = Array.from({ length: count }, () => mkdtempSync(`${os.tmpdir()}/bench-send-node-`));
  const nodes: RelayNodeProcess[] = [];
  try {
    const processes = await Promise.all(stateDirs.map((dir) => startRelayNodeProcess(stack.url, key, dir, settings)));
    for (const n of processes) if (!('error' in n)) nodes.push(n);
    const failed = processes.find((n) => 'error' in n);
    if (failed && 'error' in failed) throw new Error(`a relay node did not start: ${failed.error}`);
    // Timed from the moment every node is up (as Postfix is timed from the release of its
    // queue, running already): what was delivered during start-up is left out of the rate.
    const started = performance.now();
    const cpuAtStart = await Promise.all(nodes.map((n) => n.threadCpu()));
    const sentAtStart = await countSent(stack, tag);
    const deadline = Date.now() + 300_000;
    let sent = sentAtStart;
    while (sent < messages && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      sent = await countSent(stack, tag);
    }
    const seconds = (performance.now() - started) / 1000;
    const cpuAtEnd = await Promise.all(nodes.map((n) => n.threadCpu()));
    const spent = (field: 'total' | 'main' | 'compose') => cpuAtEnd.reduce<number | null>((sum, u, i) => {
      const [end, start] = [u[field], cpuAtStart[i]![field]];
      return sum === null || end === null || start === null ? null : sum + end - start;
    }, 0);
    const cpuMicros = spent('total')!;
    const [main, compose] = [spent('main'), spent('compose')];
    const timed = sent - sentAtStart;
    const perMessage = (micros: number) => (timed ? micros / 1000 / timed : 0);
    if (process.env.BENCH_RELAY_NODE_THREADS) {
      // Every thread's share, ms per message (BENCH_RELAY_NODE_THREADS=1): what the "other" column is made of.
      cpuAtEnd.forEach((u, i) => console.error(`  node ${i + 1} threads (ms/msg): ${Object.entries(u.byThread)
        .map(([tid, micros]) => [tid, micros - (cpuAtStart[i]!.byThread[tid] ?? 0)] as const).filter(([, d]) => d > 0).sort((a, b) => b[1] - a[1])
        .map(([tid, d]) => `${tid}${Number(tid) === u.mainTid ? ' (main)' : u.composeTids.includes(Number(tid)) ? ' (compose)' : ''} ${perMessage(d).toFixed(2)}`).join(', ')}`));
    }
    return {
      name: `edgemail, ${count} relay node${count > 1 ? 's' : ''}`, messages: timed, seconds, perSecond: timed / seconds,
      cpuMsPerMessage: perMessage(cpuMicros), sent, queued: messages,
      ...(main !== null && compose !== null ? { cpuSplit: { main: perMessage(main), compose: perMessage(compose), other: perMessage(cpuMicros - main - compose) } } : {}),
      ...(sent < messages ? { note: 'time bound reached' } : {}),
    };
  } finally {
    await Promise.allSettled(nodes.map((n) => n.stop()));
    for (const d of stateDirs) rmSync(d, { recursive: true, force: true });
  }
}

export async function postfixRelay(tools: PostfixTools, sinkPort: number, messages: number): Promise<DeliveryFigures> {
  const postfix = await startPostfix(tools, await freePort(), { domain: SINK_DOMAIN, port: sinkPort });
  try {
    const source = await runSmtpSource(tools, { port: postfix.port, sessions: 10, messages, reuse: true, size: 4096, from: `news@${FROM_DOMAIN}`, to: `user@${SINK_DOMAIN}`, timeLimitMs: 300_000 });
    if (source.error) throw new Error(`smtp-source into Postfix failed: ${source.error}`);
    const deadline = Date.now() + 60_000;
    while (postfix.queued() < messages && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const started = performance.now();
    await postfix.release();
    if (!(await postfix.drain(300_000))) throw new Error('Postfix did not empty its queue within 300 s');
    const seconds = (performance.now() - started) / 1000;
    return { name: 'Postfix (queue → smtp-sink)', messages, seconds, perSecond: messages / seconds };
  } finally {
    await postfix.stop();
  }
}

// ---------------------------------------------------------------- set-up

export async function verifiedDomain(stack: Stack, key: string): Promise<void> {
  await call(stack, 'POST', '/api/v1/domains', key, { name: FROM_DOMAIN });
  // The bench is about sending: the domain's DNS records are taken as published.
  await sql(stack, (c) => c.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now(), last_checked_at = now() WHERE name = $1', [FROM_DOMAIN]));
}

/** Recipients of the messages tagged `tag` that were delivered. */
const countSent = (stack: Stack, tag: string) => sql(stack, async (c) => Number((await c.query(
  `SELECT count(*) FROM emails e JOIN outbound_messages m ON m.id = e.message_id WHERE e.status = 'sent' AND $1 = ANY(m.tags)`, [tag],
)).rows[0].count));

export const clearEmails = (stack: Stack) => sql(stack, (c) => c.query('DELETE FROM outbound_messages'));

