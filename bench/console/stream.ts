// The event-stream half of `pnpm bench console`: latency from an event's
// commit to a signed-in browser reading it on GET /app/api/events, at
// `--stream-rate` events/s through the real event path (the inbound retry
// route: an outbox row, handed to the project's EventStream and
// WebhookDispatcher after the answer). The baseline, measured on the very same
// events in the same run: their webhook deliveries to a receiver on loopback
// (the webhooks goal, p99 under 500 ms, is this half's goal too), and the
// event-writing request's own response time.
import { fork, type ChildProcess } from 'node:child_process';
import { eq } from 'drizzle-orm';
import { users } from '@edgemail/schema';
import type { Stack } from '../../edge/local/stack.js';
import { withDatabase } from '../../edge/local/with-database.js';
import { createPlatformCredential } from '../../edge/src/services/platform-credentials/create.js';
import { hashPassword } from '../../edge/src/services/console/password.js';
import { cleanups } from '../support/stack.js';
import { seedInboundEmail } from '../support/event-load.js';
import type { StreamLoadFigures, StreamLoadReport, StreamLoadStart } from './stream-child.js';

export const streamDefaults = { 'stream-rate': 100, 'stream-seconds': 10 };
export type StreamFlags = typeof streamDefaults;

/** The settings the stack needs for this half: webhooks to loopback, no API limit in the way. */
export const streamSettings = { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SERVICE_RATELIMIT_API_PER_MINUTE: '1000000000' };

const GOAL_P99_MS = 500;
const WARMUP_EVENTS = 30;
const PASSWORD = 'bench: stream watcher password';

export async function runStreamBench(stack: Stack, flags: StreamFlags) {
  const rate = flags['stream-rate'];
  const seconds = flags['stream-seconds'];
  console.log(`\nconsole event stream: ${rate} events/s for ${seconds}s, one browser following, the same events to one webhook`);
  const tenant = await setUp(stack);
  const cookie = await signIn(stack, tenant.email);
  const inboundId = await seedInboundEmail(stack.databaseUrl, tenant.projectId, 'bench-stream');

  const client = fork(new URL('./stream-child.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => client.once('exit', () => resolve()));
  const stop = async () => { if (client.exitCode === null) { client.kill(); await exited; } };
  cleanups.add(stop);
  let f: StreamLoadFigures;
  try {
    const { receiverUrl } = await nextMessage<{ receiverUrl: string }>(client);
    await call(stack, 'POST', '/api/v1/webhooks', tenant.key, { url: `${receiverUrl}/hook`, events: ['inbound.received'] });
    client.send({ workerUrl: stack.url, cookie, key: tenant.key, inboundId, rate, seconds, warmupEvents: WARMUP_EVENTS } satisfies StreamLoadStart);
    const report = await nextMessage<StreamLoadReport>(client);
    if ('error' in report) throw new Error(report.error);
    f = report.figures;
  } finally {
    await stop();
    cleanups.delete(stop);
  }

  const pass = f.streamed === f.events && f.idGaps === 0 && f.stream.p99 < GOAL_P99_MS;
  console.log('');
  console.log('| path | events | p50 ms | p99 ms | max ms |');
  console.log('|---|---|---|---|---|');
  console.log(`| commit → browser (SSE) | ${f.streamed}/${f.events} | ${f.stream.p50.toFixed(0)} | ${f.stream.p99.toFixed(0)} | ${f.stream.max.toFixed(0)} |`);
  console.log(`| commit → webhook receiver (baseline) | ${f.delivered}/${f.events} | ${f.webhook.p50.toFixed(0)} | ${f.webhook.p99.toFixed(0)} | ${f.webhook.max.toFixed(0)} |`);
  console.log(`| event-writing request (baseline) | ${f.events} | ${f.write.p50.toFixed(0)} | ${f.write.p99.toFixed(0)} | |`);
  console.log('');
  console.log(`stream p99 / webhook p99 (same events, same run): ${(f.stream.p99 / f.webhook.p99).toFixed(2)}×; ${f.streamEventsPerSecond.toFixed(0)} stream events/s of all kinds (each retry also writes an audit event); id gaps or repeats: ${f.idGaps}`);
  console.log(`goal: p99 commit → browser under ${GOAL_P99_MS} ms at ${rate} events/s, none lost: ${pass ? 'PASS' : 'BELOW'} (${f.stream.p99.toFixed(0)} ms)`);
  return { rate, seconds, goal: { p99Ms: GOAL_P99_MS, pass }, ...f };
}

/** A user with a password, owner of a project, and a key that writes the events and the webhook: all its own, beside the other half's. */
async function setUp(stack: Stack): Promise<{ email: string; projectId: string; key: string }> {
  const { token: admin } = await withDatabase(stack.databaseUrl, (db) => createPlatformCredential(db, { name: 'bench-stream' }));
  const email = `bench-stream-${process.pid}@example.com`;
  const { user } = await call<{ user: { id: string } }>(stack, 'POST', '/api/v1/admin/users', admin, { email });
  const { project } = await call<{ project: { id: string } }>(stack, 'POST', '/api/v1/admin/projects', admin, { name: 'bench-stream', owner_id: user.id });
  const { token: key } = await call<{ token: string }>(stack, 'POST', '/api/v1/api-keys', admin, {
    name: 'bench-stream', permissions: ['webhooks:write', 'inbound:write'],
  }, { 'X-Service-Project-Id': project.id });
  await withDatabase(stack.databaseUrl, (db) => db.update(users).set({ passwordHash: hashPassword(PASSWORD) }).where(eq(users.id, user.id)));
  return { email, projectId: project.id, key };
}

/** Signs in over POST /app/api/session as a browser does; the session cookie. */
async function signIn(stack: Stack, email: string): Promise<string> {
  const res = await fetch(`${stack.url}/app/api/session`, {
    method: 'POST', headers: { 'content-type': 'application/json', origin: stack.url }, body: JSON.stringify({ email, password: PASSWORD }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${text.slice(0, 300)}`);
  const cookie = res.headers.getSetCookie().find((c) => /^(__Host-)?edgemail_session=/.test(c));
  if (!cookie) throw new Error('sign-in set no session cookie');
  return cookie.split(';')[0]!;
}


function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m as T));
    child.once('exit', (code) => reject(new Error(`the load client exited (${code}) before answering`)));
  });
}

async function call<T = unknown>(stack: Stack, method: string, path: string, token: string, body: unknown, headers: Record<string, string> = {}): Promise<T> {
  const res = await fetch(`${stack.url}${path}`, {
    method, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers }, body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}
