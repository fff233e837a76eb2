// `pnpm bench webhooks`: how fast events become signed POSTs at a receiver.
// A throwaway local stack, a tenant with N webhooks pointing at a Node receiver
// on loopback, and events written at a fixed rate through the real event path
// (`POST /api/v1/inbound-emails/{id}/retry`: an outbox row, then the hand-over
// to the WebhookDispatcher). Latency is from the event's commit (the envelope's
// `timestamp`, the outbox row's `created_at`) to the receiver reading the request.
import { fork, type ChildProcess } from 'node:child_process';
import type { Stack } from '../edge/local/stack.js';
import { numberFlags } from './args.js';
import { finishRun, startRun } from './support/results.js';
import { bootstrap, cleanups, withStack } from './support/stack.js';
import { seedInboundEmail } from './support/event-load.js';
import type { WebhookLoadReport, WebhookLoadStart, WebhookLoadFigures } from './support/webhook-load-child.js';

const DEFAULTS = { rate: 100, seconds: 10, 'wide-rate': 10, 'wide-webhooks': 50 };
const GOAL_P99_MS = 500;

const SETTINGS = {
  SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  SERVICE_RATELIMIT_API_PER_MINUTE: '1000000000',
};

interface Scenario { webhooks: number; rate: number; seconds: number }

type ScenarioResult = Scenario & WebhookLoadFigures;

export async function runWebhooksBench(argv: string[]): Promise<void> {
  const flags = numberFlags(argv, DEFAULTS);
  const clock = startRun();
  const scenarios: Scenario[] = [
    { webhooks: 1, rate: flags.rate, seconds: flags.seconds },
    { webhooks: flags['wide-webhooks'], rate: flags['wide-rate'], seconds: flags.seconds },
  ];
  console.error(`bench webhooks: ${scenarios.map((s) => `${s.webhooks} webhook(s) at ${s.rate} events/s`).join(', then ')}, ${flags.seconds}s each`);

  const results = await withStack(SETTINGS, async (stack) => {
    const tenant = await bootstrap(stack);
    const key = await createKey(stack, tenant.platformToken, tenant.projectId);
    const inboundId = await seedInboundEmail(stack.databaseUrl, tenant.projectId, 'bench-webhooks');
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
  finishRun('webhooks', clock, { options: flags, goal: { p99Ms: GOAL_P99_MS, pass }, results });
}

async function runScenario(stack: Stack, key: string, inboundId: string, scenario: Scenario): Promise<ScenarioResult> {
  const ids: string[] = [];
  // The load client (event writer and receiver) runs in a process of its own:
  // this one runs the Neon bridge, whose event loop it must not share.
  const client = fork(new URL('./support/webhook-load-child.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => client.once('exit', () => resolve()));
  const stop = async () => { if (client.exitCode === null) { client.kill(); await exited; } };
  cleanups.add(stop);
  try {
    const ready = await nextMessage<{ receiverUrl: string }>(client);
    const secrets: Record<string, string> = {};
    for (let i = 0; i < scenario.webhooks; i++) {
      const { webhook } = await api<{ webhook: { id: string; secret: string } }>(stack, 'POST', '/api/v1/webhooks', key, {
        url: `${ready.receiverUrl}/hook/${i}`, events: ['inbound.received'],
      });
      ids.push(webhook.id);
      secrets[`/hook/${i}`] = webhook.secret;
    }
    console.error(`  ${scenario.webhooks} webhook(s), ${scenario.rate} events/s for ${scenario.seconds}s…`);
    client.send({ workerUrl: stack.url, key, inboundId, rate: scenario.rate, seconds: scenario.seconds, webhooks: scenario.webhooks, warmupEvents: WARMUP_EVENTS, secrets } satisfies WebhookLoadStart);
    const report = await nextMessage<WebhookLoadReport>(client);
    if ('error' in report) throw new Error(report.error);
    if (report.badSignatures) throw new Error(`${report.badSignatures} deliveries carried a signature that did not verify`);
    return { ...scenario, ...report.figures };
  } finally {
    for (const id of ids) await api(stack, 'DELETE', `/api/v1/webhooks/${id}`, key).catch(() => {});
    await stop();
    cleanups.delete(stop);
  }
}

const WARMUP_EVENTS = 30;

function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`the load client exited (${code}) before answering`)));
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
