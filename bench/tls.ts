// `pnpm bench tls`: what per-handshake certificate resolution costs a relay
// node. STARTTLS handshakes per second against the node's inbound listener
// choosing each handshake's certificate by the spec's order (SNI set, a
// certificate assigned to `inbound`) vs the same process serving one static
// certificate (resolution bypassed), same run, alternating rounds, one Node
// client for both. Then the certificate poll itself: `GET
// /relay/v1/certificates` answered 304 (If-None-Match: the generation held)
// vs 200 (the bundle), requests/s and p50 under autocannon.
import { fork } from 'node:child_process';
import { sql } from 'drizzle-orm';
import { ENCRYPTION_KEY_ENV } from '../edge/local/encryption-key.js';
import { withDatabase } from '../edge/local/with-database.js';
import { seal } from '../edge/src/crypto/seal.js';
import { PRIVATE_KEY_CONTEXT } from '../edge/src/services/certificates/self-signed.js';
import { numberFlags } from './args.js';
import { loadTarget, toRun } from './support/load.js';
import { finishRun, startRun } from './support/results.js';
import { benchSettings, bootstrap, cleanups, withStack } from './support/stack.js';
import type { TlsListenerChildMessage, TlsListenerChildStart } from './support/tls-listener-child.js';
import { countTransactions } from './support/transactions.js';
import type { RunResult, TransactionCount } from './support/types.js';
import { startTls } from '../test/support/starttls.js';

const DEFAULTS = { seconds: 5, rounds: 3, connections: 16, warmup: 2, 'http-seconds': 5, 'http-connections': 8 };
/** Resolving keeps at least this share of the static listener's handshakes per second. */
const GOAL_RATIO = 0.9;
const SNI = 'mx1.example.net';
// Far above what a run issues: the chatter limit (600 a minute per node) is not what is measured.
const SETTINGS = { SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '1000000000' };

/** EHLO, STARTTLS, a full handshake with SNI; resolves when it completed. */
async function handshake(port: number): Promise<void> {
  (await startTls(port, SNI)).destroy();
}

/** `connections` clients, each handshaking back to back for `seconds`; handshakes per second. */
async function handshakeRound(port: number, seconds: number, connections: number): Promise<{ perSecond: number; handshakes: number; errors: number }> {
  const end = Date.now() + seconds * 1000;
  let done = 0;
  let errors = 0;
  const started = Date.now();
  await Promise.all(Array.from({ length: connections }, async () => {
    while (Date.now() < end) {
      try {
        await handshake(port);
        done++;
      } catch {
        errors++;
      }
    }
  }));
  return { perSecond: done / ((Date.now() - started) / 1000), handshakes: done, errors };
}

interface Listeners { ports: { resolving: number; static: number }; presents: unknown; cpu(): Promise<number>; stop: () => Promise<void> }

function startListeners(start: TlsListenerChildStart): Promise<Listeners> {
  const child = fork(new URL('./support/tls-listener-child.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      if (child.connected) child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  cleanups.add(stop);
  /** The listener process's CPU time so far (user + system), µs. */
  const cpu = () => new Promise<number>((resolve) => {
    const answer = (m: TlsListenerChildMessage) => {
      if (!('cpu' in m)) return;
      child.off('message', answer);
      resolve(m.cpu.user + m.cpu.system);
    };
    child.on('message', answer);
    child.send('cpu');
  });
  return new Promise((resolve, reject) => {
    child.once('message', (m: TlsListenerChildMessage) => {
      if ('error' in m) reject(new Error(`the listener process did not start: ${m.error}`));
      else if ('resolving' in m) resolve({ ports: { resolving: m.resolving, static: m.static }, presents: m.presents, cpu, stop: async () => { await stop(); cleanups.delete(stop); } });
    });
    void exited.then(() => reject(new Error('the listener process exited')));
    child.send(start);
  });
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

export async function runTlsBench(argv: string[]): Promise<void> {
  const flags = numberFlags(argv, DEFAULTS);
  const clock = startRun();
  console.error(`bench tls: ${flags.rounds} rounds × ${flags.seconds}s per side, ${flags.connections} clients (+${flags.warmup}s warm-up each)`);
  await withStack(SETTINGS, async (stack) => {
    const tenant = await bootstrap(stack);
    // An installation-wide node, as an operator's MX is.
    const created = await (await fetch(`${stack.url}/api/v1/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.platformToken}`, 'x-service-project-id': tenant.projectId, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench-relay', permissions: ['relay:write'] }),
    })).json() as { token: string };
    const enrolled = await (await fetch(`${stack.url}/relay/v1/enroll`, {
      method: 'POST', headers: { authorization: `Bearer ${created.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'bench-tls' }),
    })).json() as { node: { id: string }; token: string };
    // The assigned certificate, stored as the certificate routes store one (key sealed).
    const { generateSelfSigned } = await import(new URL('../relay-node/src/tls/self-signed.ts', import.meta.url).href) as { generateSelfSigned(names: string[]): Promise<{ certificate: string; private_key: string; not_after: string }> };
    const pair = await generateSelfSigned([SNI]);
    const sealed = await seal(pair.private_key, benchSettings({})[ENCRYPTION_KEY_ENV]!, PRIVATE_KEY_CONTEXT);
    await withDatabase(stack.databaseUrl, async (db) => {
      await db.execute(sql`UPDATE relay_nodes SET installation_wide = true WHERE id = ${enrolled.node.id}`);
      await db.execute(sql`INSERT INTO certificates (name, kind, certificate_pem, private_key_sealed, hosts, algorithm, key_size, not_after)
        VALUES ('mx1', 'issued', ${pair.certificate}, ${sealed}, ARRAY[${SNI}], 'ecdsa', 256, ${pair.not_after})`);
      await db.execute(sql`INSERT INTO listener_certificates (listener, certificate_id) SELECT 'inbound', id FROM certificates WHERE name = 'mx1'`);
    });

    const listeners = await startListeners({ edgeUrl: stack.url, token: enrolled.token, settings: { SERVICE_SERVER_PUBLIC_URL: stack.url } });
    console.error(`  the node's inbound listener presents ${JSON.stringify(listeners.presents)}`);
    const rounds: Record<'resolving' | 'static', number[]> = { resolving: [], static: [] };
    // The listener process's CPU µs per handshake: the figure a busy machine disturbs least.
    const cpuPer: Record<'resolving' | 'static', number[]> = { resolving: [], static: [] };
    let errors = 0;
    try {
      for (const side of ['resolving', 'static'] as const) {
        console.error(`  warm-up ${side} (${flags.warmup}s)`);
        await handshakeRound(listeners.ports[side], flags.warmup, flags.connections);
      }
      for (let round = 1; round <= flags.rounds; round++) {
        // Alternating which side goes first, so a drift in the machine's load favours neither.
        const order = round % 2 ? (['resolving', 'static'] as const) : (['static', 'resolving'] as const);
        for (const side of order) {
          const cpuBefore = await listeners.cpu();
          const r = await handshakeRound(listeners.ports[side], flags.seconds, flags.connections);
          const cpuUs = (await listeners.cpu()) - cpuBefore;
          errors += r.errors;
          rounds[side].push(r.perSecond);
          cpuPer[side].push(cpuUs / r.handshakes);
          console.error(`  round ${round} ${side}: ${r.perSecond.toFixed(0)} handshakes/s, ${(cpuUs / r.handshakes).toFixed(0)} µs listener CPU each${r.errors ? `, ${r.errors} errors` : ''}`);
        }
      }
    } finally {
      await listeners.stop();
    }

    // The poll: 304 (unchanged) against 200 (the bundle), same node credential.
    const bundleText = await (await fetch(`${stack.url}/relay/v1/certificates`, { headers: { authorization: `Bearer ${enrolled.token}` } })).text();
    const bundleBytes = Buffer.byteLength(bundleText);
    const generation = Number((JSON.parse(bundleText) as { generation: number }).generation);
    const auth = { authorization: `Bearer ${enrolled.token}` };
    const targets = [
      { name: '304 unchanged', path: '/relay/v1/certificates', headers: { ...auth, 'if-none-match': `"${generation}"` }, expectStatus: 304 },
      { name: '200 bundle', path: '/relay/v1/certificates', headers: auth },
    ];
    const http: Record<string, RunResult[]> = { '304 unchanged': [], '200 bundle': [] };
    for (const t of targets) await loadTarget(stack, t, 1, flags['http-connections']);
    for (let round = 1; round <= Math.min(flags.rounds, 2); round++) {
      for (const t of targets) {
        const run = toRun(round, await loadTarget(stack, t, flags['http-seconds'], flags['http-connections']));
        const expected = t.name.startsWith('304') ? '304' : '200';
        const wrong = Object.entries(run.statusCodes).filter(([code]) => code !== expected);
        if (wrong.length || run.errors) throw new Error(`${t.name}: expected only ${expected}, got ${JSON.stringify(run.statusCodes)}, ${run.errors} errors`);
        http[t.name]!.push(run);
        console.error(`  round ${round} ${t.name}: ${run.requestsPerSecond.toFixed(0)} req/s, p50 ${run.p50Ms} ms`);
      }
    }

    const counted: Record<string, TransactionCount> = {};
    for (const t of targets) {
      console.error(`  counting database transactions: 100 sequential ${t.name} requests`);
      counted[t.name] = await countTransactions(stack, t, 100);
    }

    const resolving = mean(rounds.resolving);
    const fixed = mean(rounds.static);
    const ratio = resolving / fixed;
    const pass = ratio >= GOAL_RATIO;
    const summary = (runs: RunResult[]) => ({ requestsPerSecond: mean(runs.map((r) => r.requestsPerSecond)), p50Ms: mean(runs.map((r) => r.p50Ms)), p99Ms: mean(runs.map((r) => r.p99Ms)) });
    const notModified = summary(http['304 unchanged']!);
    const bundle = summary(http['200 bundle']!);
    console.log('');
    console.log('listener                         handshakes/s  per round');
    console.log(`resolving (SNI, assigned)        ${resolving.toFixed(0).padStart(12)}  ${rounds.resolving.map((x) => x.toFixed(0)).join(', ')}`);
    console.log(`static (one context, no lookup)  ${fixed.toFixed(0).padStart(12)}  ${rounds.static.map((x) => x.toFixed(0)).join(', ')}`);
    const cpuResolving = mean(cpuPer.resolving);
    const cpuStatic = mean(cpuPer.static);
    console.log(`resolving / static: ${ratio.toFixed(3)}${errors ? ` (${errors} handshake errors)` : ''}`);
    console.log(`listener CPU per handshake: resolving ${cpuResolving.toFixed(0)} µs, static ${cpuStatic.toFixed(0)} µs (static / resolving ${(cpuStatic / cpuResolving).toFixed(3)}: the throughput ratio a CPU-bound listener would reach)`);
    console.log(`goal: per-handshake resolution keeps >= ${GOAL_RATIO} of the static handshake rate: ${pass ? 'PASS' : 'BELOW'}`);
    console.log('');
    console.log(`GET /relay/v1/certificates  304: ${notModified.requestsPerSecond.toFixed(0)} req/s, p50 ${notModified.p50Ms.toFixed(1)} ms   200: ${bundle.requestsPerSecond.toFixed(0)} req/s, p50 ${bundle.p50Ms.toFixed(1)} ms   (304/200 throughput ${(notModified.requestsPerSecond / bundle.requestsPerSecond).toFixed(2)})`);
    console.log(`  database transactions per request: 304 ${counted['304 unchanged']!.perRequest.toFixed(2)}, 200 ${counted['200 bundle']!.perRequest.toFixed(2)} (pg_stat_database over 100 sequential requests each; the node credential's check is in both); bytes: 304 0, 200 ${bundleBytes}`);
    finishRun('tls', clock, {
      options: flags,
      handshakes: { resolving, static: fixed, rounds, errors, ratio, goal: GOAL_RATIO, pass, cpuMicrosPerHandshake: { resolving: cpuResolving, static: cpuStatic, rounds: cpuPer } },
      poll: { notModified, bundle, runs: http, transactionsPerRequest: { notModified: counted['304 unchanged']!.perRequest, bundle: counted['200 bundle']!.perRequest }, bundleBytes },
    });
  });
}
