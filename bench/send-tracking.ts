// `pnpm bench send`, open and click tracking (issue 29, docs/tracking.md):
// 1. the tracked-link redirect `GET /t/c/<token>` against `GET /health`, in
//    interleaved rounds of the same run (goal >= 0.8): one HMAC, no I/O
//    before the answer, the events written in batches behind it;
// 2. the HTML the delivery half sends carries links, so its tracked run
//    (`--` row "tracking on") pays for the rewrite at the claim (one HMAC per
//    link and the pixel, per recipient) against the plain run (goal >= 0.9).
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import type { Stack } from '../edge/local/stack.js';
import type * as SmtpServerModule from '../relay-node/node_modules/smtp-server/dist/cjs/smtp-server.js';
import { ENCRYPTION_KEY_ENV } from '../edge/local/encryption-key.js';
import { signToken } from '../edge/src/services/tracking/token.js';
import { loadTarget, toRun } from './support/load.js';
import { benchSettings } from './support/stack.js';
import { sql } from './support/api.js';
import type { RunResult, Target } from './support/types.js';

const fromRelayNode = createRequire(new URL('../relay-node/package.json', import.meta.url));

export const REDIRECT_GOAL = 0.8;
export const TRACKED_DELIVERY_GOAL = 0.9;
/** Off the per-client limit: the load comes from one address. */
export const TRACKING_SETTINGS = { SERVICE_RATELIMIT_TRACKING_PER_MINUTE: '1000000000' };
/** Five links in every delivered message's HTML (tracked or not, so both runs carry the same bytes). */
export const LINKS_HTML = Array.from({ length: 5 }, (_, i) => `<a href="https://shop.example.org/item/${i}?utm_source=mail&amp;n=${i}">item ${i}</a>`).join(' ');
const LANDING = 'https://shop.example.org/landing?utm_source=bench';

export interface RedirectFigures { name: string; requestsPerSecond: number; p50Ms: number; p99Ms: number; runs: RunResult[] }

/** A click token for one real email of the run (signed as the claim signs it), issued an hour ago: human-looking clicks. */
async function clickPath(stack: Stack): Promise<string> {
  const emailId = await sql(stack, async (c) => (await c.query('SELECT id FROM emails ORDER BY created_at LIMIT 1')).rows[0]?.id as string | undefined);
  if (!emailId) throw new Error('bench send: no email to track clicks of (the send half queues some first)');
  const key = benchSettings({})[ENCRYPTION_KEY_ENV]!;
  const token = await signToken({ 'database.crypto.encryption_key': key }, { kind: 'click', emailId, issuedAt: Math.floor(Date.now() / 1000) - 3600, linkIndex: 0, url: LANDING });
  return `/t/c/${token}`;
}

export async function measureRedirect(stack: Stack, flags: { duration: number; connections: number; rounds: number; warmup: number }): Promise<RedirectFigures[]> {
  const path = await clickPath(stack);
  const probe = await fetch(`${stack.url}${path}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36' } });
  if (probe.status !== 302 || probe.headers.get('location') !== LANDING) throw new Error(`the tracked link answers ${probe.status} (Location ${probe.headers.get('location')}), not 302 to ${LANDING}`);
  const targets: Target[] = [
    { name: 'GET /health', path: '/health' },
    { name: 'GET /t/c/<token> (302)', path, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0 Safari/537.36' } },
  ];
  for (const t of targets) await loadTarget(stack, t, flags.warmup, flags.connections);
  const runs = new Map<Target, RunResult[]>(targets.map((t) => [t, []]));
  for (let round = 1; round <= flags.rounds; round++) {
    for (const t of targets) {
      const run = toRun(round, await loadTarget(stack, t, flags.duration, flags.connections));
      const expected = t.path === '/health' ? '200' : '302';
      const others = Object.entries(run.statusCodes).filter(([code]) => code !== expected);
      if (others.length || run.errors) throw new Error(`${t.name} round ${round}: status codes ${JSON.stringify(run.statusCodes)}, errors ${run.errors}`);
      console.error(`  round ${round} ${t.name}: ${run.requestsPerSecond.toFixed(0)} req/s, p99 ${run.p99Ms} ms`);
      runs.get(t)!.push(run);
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return targets.map((t) => {
    const r = runs.get(t)!;
    return { name: t.name, requestsPerSecond: mean(r.map((x) => x.requestsPerSecond)), p50Ms: mean(r.map((x) => x.p50Ms)), p99Ms: mean(r.map((x) => x.p99Ms)), runs: r };
  });
}

/** Clicks the redirect load recorded (the batched writes caught up), as a check that recording kept pace. */
export const recordedClicks = (stack: Stack) => sql(stack, async (c) => Number((await c.query(`SELECT coalesce(sum(count), 0) AS n FROM tracking_daily_counts WHERE kind = 'click' AND tag = ''`)).rows[0].n));

/**
 * An SMTP sink in this process (smtp-server, the relay node's own dependency), for the tracking rows when
 * Postfix's smtp-sink is not installed: it takes every message and keeps nothing. Both rows it serves (plain
 * and tracked) share it, so their ratio holds; their msg/s are not comparable with smtp-sink's.
 */
export async function startNodeSink(): Promise<{ port: number; stop(): Promise<void> }> {
  const { SMTPServer } = fromRelayNode('smtp-server') as typeof SmtpServerModule;
  const server = new SMTPServer({
    logger: false, disableReverseLookup: true, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], maxClients: 1000,
    onData(stream, _session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => callback(null, 'Ok'));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
