// `pnpm bench api`: throughput of the cheapest route (GET /health, no auth, no
// database) against an authenticated API route (GET /api/v1/api-keys with a
// project API key: credential look-up + list query over the Neon bridge), on one
// throwaway local stack, plus the database transactions an authenticated request
// costs. A second Worker on the same database runs with the rate limiter off,
// so the limiter's cost is measured in the same rounds. The machine is shared,
// so the figures that matter are the ratios.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import pg from 'pg';
import { repoRoot, startEdgeWorker } from '../edge/local/edge-worker.js';
import { startStack, type Stack } from '../edge/local/stack.js';
import { withDatabase } from '../edge/cli/database.js';
import { createPlatformCredential } from '../edge/src/services/platform-credentials/create.js';
import { numberFlags } from './args.js';

// ---------------------------------------------------------------- options

export interface LoadOptions {
  /** Seconds of measured load per target per round. */
  duration: number;
  /** Seconds of unmeasured load per target before the first round. */
  warmup: number;
  connections: number;
  /** Rounds of health → authenticated → …; each target's figures are the mean over rounds. */
  rounds: number;
  /** Sequential requests per target for counting database transactions. */
  sequential: number;
}

const DEFAULTS: LoadOptions = { duration: 10, warmup: 2, connections: 32, rounds: 2, sequential: 200 };

/** Authenticated throughput should keep at least this share of /health throughput. */
const GOAL_RATIO = 0.4;
/** With the rate limiter on, throughput should keep at least this share of it off. */
const LIMITER_GOAL_RATIO = 0.85;

/**
 * Stack settings of the main pair of runs. The API rate limit is set far above
 * anything a run can issue, so the limiter (on by default) never answers 429
 * while its bookkeeping, if any, is still paid.
 */
export const BASELINE_SETTINGS: Record<string, string> = { SERVICE_RATELIMIT_API_PER_MINUTE: '1000000000' };

/** Extra Workers on the same database and bridge, named, with their own settings. */
export const VARIANTS: Record<string, Record<string, string>> = {
  'limiter off': { SERVICE_RATELIMIT_ENABLED: 'false' },
};

// ---------------------------------------------------------------- targets

/** What `bootstrap` created: a tenant set up over the public API as a user would. */
export interface Tenant {
  platformToken: string;
  projectId: string;
  /** Project API keys holding `apikeys:read`; the first one drives the load. */
  keys: { id: string; token: string }[];
}

export interface Target {
  name: string;
  path: string;
  headers?: Record<string, string>;
  /** The Worker to load: a variant's; default the stack's own. */
  baseUrl?: string;
  /** Fail the benchmark unless every response is 200. */
  requireAll200?: boolean;
}

/** The pair this benchmark compares; a later pair (other settings) reuses it. */
export const apiTargets = (tenant: Tenant, variants: Record<string, string>): Target[] => {
  const authenticated = { path: '/api/v1/api-keys', headers: { authorization: `Bearer ${tenant.keys[0]!.token}` }, requireAll200: true };
  return [
    { name: 'health', path: '/health' },
    { name: 'authenticated', ...authenticated },
    { name: 'authenticated, limiter off', ...authenticated, baseUrl: variants['limiter off'] },
  ];
};

// ---------------------------------------------------------------- results

export interface RunResult {
  round: number;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  durationS: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

export interface TargetResult {
  name: string;
  path: string;
  /** Means over the rounds. */
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Sums over the rounds. */
  non2xx: number;
  errors: number;
  runs: RunResult[];
  /** Database transactions per request over `sequential` sequential requests. */
  transactions: TransactionCount;
}

export interface Measurement {
  settings: Record<string, string>;
  targets: TargetResult[];
}

// ---------------------------------------------------------------- the benchmark

export async function runApiBench(argv: string[]): Promise<void> {
  const load = numberFlags(argv, DEFAULTS);
  const startedAt = new Date();
  const loadBefore = os.loadavg();
  console.error(
    `bench api: ${load.connections} connections, ${load.rounds} rounds × ${load.duration}s per target ` +
    `(+${load.warmup}s warm-up), ${load.sequential} sequential requests for the transaction count`,
  );

  const main = await measure(BASELINE_SETTINGS, VARIANTS, apiTargets, load);

  const [health, auth, authOff] = main.targets as [TargetResult, TargetResult, TargetResult];
  const ratio = auth.requestsPerSecond / health.requestsPerSecond;
  const pass = ratio >= GOAL_RATIO;
  const limiterRatio = auth.requestsPerSecond / authOff.requestsPerSecond;
  const limiterPass = limiterRatio >= LIMITER_GOAL_RATIO;
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

  console.log('');
  printTable(main.targets);
  console.log('');
  console.log(`authenticated / health throughput: ${pct(ratio)} (limiter off: ${pct(authOff.requestsPerSecond / health.requestsPerSecond)})`);
  console.log(`goal: authenticated keeps >= ${GOAL_RATIO * 100}% of health throughput: ${pass ? 'PASS' : 'BELOW'}`);
  console.log(`limiter on / limiter off throughput: ${pct(limiterRatio)}`);
  console.log(`goal: the rate limiter keeps >= ${LIMITER_GOAL_RATIO * 100}% of the throughput without it: ${limiterPass ? 'PASS' : 'BELOW'}`);
  const tx = auth.transactions;
  console.log(
    `database transactions per authenticated request: ${tx.perRequest.toFixed(2)} ` +
    `(health: ${health.transactions.perRequest.toFixed(2)})`,
  );
  console.log(
    `  pg_stat_database over ${tx.requests} sequential requests: ${tx.transactions} commits+rollbacks, ` +
    `less ${tx.sessions} for new bridge connections. Each Neon HTTP query is one transaction, so this ` +
    `is the database round trips per request: ~2 expected (key look-up, list query), plus at most one ` +
    `last-used write per key per minute.`,
  );
  const loadAfter = os.loadavg();
  console.log(`machine: ${os.cpus().length} cpus, load average ${fmtLoad(loadBefore)} before, ${fmtLoad(loadAfter)} after`);

  const file = `${repoRoot}bench/results/api-${startedAt.toISOString().replace(/[:.]/g, '-')}.json`;
  mkdirSync(`${repoRoot}bench/results`, { recursive: true });
  writeFileSync(file, `${JSON.stringify({
    benchmark: 'api',
    startedAt: startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    git: gitInfo(),
    machine: { cpus: os.cpus().length, node: process.version, loadavgBefore: loadBefore, loadavgAfter: loadAfter },
    options: load,
    goal: { ratio: GOAL_RATIO, authenticatedOverHealth: ratio, pass },
    limiterGoal: { ratio: LIMITER_GOAL_RATIO, limiterOnOverOff: limiterRatio, pass: limiterPass },
    measurements: [main],
  }, null, 2)}\n`);
  console.log(`results: ${file.slice(repoRoot.length)}`);
}

/**
 * Starts a fresh stack with `settings`, sets up a tenant, loads every target in
 * turn (warm-up, then `rounds` interleaved rounds), counts database
 * transactions per request, and stops the stack.
 */
export async function measure(
  settings: Record<string, string>,
  variants: Record<string, Record<string, string>>,
  targetsFor: (tenant: Tenant, variantUrls: Record<string, string>) => Target[],
  load: LoadOptions,
): Promise<Measurement> {
  return withStack(settings, async (stack) => {
    const tenant = await bootstrap(stack);
    const variantUrls: Record<string, string> = {};
    const variantStops: (() => Promise<void>)[] = [];
    try {
    for (const [name, extra] of Object.entries(variants)) {
      console.error(`  starting a second Worker: ${name}`);
      const worker = await startEdgeWorker({
        vars: { SERVICE_DATABASE_URL: stack.databaseUrl, ...settings, ...extra, LOCAL_NEON_BRIDGE: stack.bridge.url },
        persistTo: false,
        logLevel: 'error',
      });
      const stop = () => worker.stop();
      cleanups.add(stop);
      variantStops.push(async () => { await stop(); cleanups.delete(stop); });
      variantUrls[name] = worker.url;
    }
    const targets = targetsFor(tenant, variantUrls);

    for (const t of targets) {
      console.error(`  warm-up ${t.name} (${load.warmup}s)`);
      await loadTarget(stack, t, load.warmup, load.connections);
    }
    const runs = new Map<Target, RunResult[]>(targets.map((t) => [t, []]));
    for (let round = 1; round <= load.rounds; round++) {
      for (const t of targets) {
        const result = await loadTarget(stack, t, load.duration, load.connections);
        const run = toRun(round, result);
        console.error(`  round ${round} ${t.name}: ${run.requestsPerSecond.toFixed(0)} req/s, p99 ${run.p99Ms} ms`);
        if (t.requireAll200) await assertAll200(stack, t, run);
        runs.get(t)!.push(run);
      }
    }

    const counted = new Map<Target, TransactionCount>();
    for (const t of targets) {
      console.error(`  counting transactions: ${load.sequential} sequential ${t.name} requests`);
      counted.set(t, await countTransactions(stack, t, load.sequential));
    }

    return {
      settings,
      targets: targets.map((t) => summarise(t, runs.get(t)!, counted.get(t)!)),
    };
    } finally {
      await Promise.allSettled(variantStops.map((stop) => stop()));
    }
  });
}

// ---------------------------------------------------------------- stack

const cleanups = new Set<() => Promise<void>>();
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (interrupted) return;
    interrupted = true;
    console.error(`\n${signal}: stopping the stack…`);
    void Promise.allSettled([...cleanups].map((c) => c())).then(() => process.exit(130));
  });
}

/** A stack on free ports and a throwaway data directory, stopped and removed afterwards. */
async function withStack<T>(settings: Record<string, string>, fn: (stack: Stack) => Promise<T>): Promise<T> {
  const dataDir = `${repoRoot}.data/bench-${process.pid}`;
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const removeDir = async () => rmSync(dataDir, { recursive: true, force: true });
  cleanups.add(removeDir);
  let stack: Stack | undefined;
  let stopping: Promise<void> | undefined;
  const stop = async () => {
    stopping ??= (async () => {
      await stack?.stop();
      await removeDir();
    })();
    return stopping;
  };
  cleanups.add(stop);
  try {
    console.error('  starting the stack (postgres, bridge, worker)…');
    const [pgPort, workerPort] = [await freePort(), await freePort()];
    stack = await startStack({ dataDir, pgPort, workerPort, settings, logLevel: 'error' });
    return await fn(stack);
  } finally {
    await stop();
    cleanups.delete(stop);
    cleanups.delete(removeDir);
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// ---------------------------------------------------------------- tenant

const KEYS = 5;

/** A platform credential minted in the database, then a user, project and keys over HTTP. */
async function bootstrap(stack: Stack): Promise<Tenant> {
  const { token: platformToken } = await withDatabase(stack.databaseUrl, (db) =>
    createPlatformCredential(db, { name: 'bench' }));

  const { user } = await call<{ user: { id: string } }>(stack, 'POST', '/api/v1/admin/users', platformToken, {
    body: { email: `bench-${process.pid}@example.com` },
  });
  const { project } = await call<{ project: { id: string } }>(stack, 'POST', '/api/v1/admin/projects', platformToken, {
    body: { name: 'bench', owner_id: user.id },
  });
  const keys: Tenant['keys'] = [];
  for (let i = 1; i <= KEYS; i++) {
    const created = await call<{ api_key: { id: string }; token: string }>(stack, 'POST', '/api/v1/api-keys', platformToken, {
      headers: { 'X-Service-Project-Id': project.id },
      body: { name: `bench-${i}`, permissions: ['apikeys:read'] },
    });
    keys.push({ id: created.api_key.id, token: created.token });
  }
  return { platformToken, projectId: project.id, keys };
}

async function call<T>(
  stack: Stack, method: string, path: string, token: string,
  opts: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<T> {
  const res = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...opts.headers },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

// ---------------------------------------------------------------- load

function loadTarget(stack: Stack, target: Target, duration: number, connections: number): Promise<autocannon.Result> {
  return autocannon({
    url: `${target.baseUrl ?? stack.url}${target.path}`,
    headers: target.headers,
    connections,
    duration,
    // In a worker thread, so the load generator does not share the event loop
    // of the Neon bridge, which runs in this process.
    workers: 1,
  });
}

function toRun(round: number, r: autocannon.Result): RunResult {
  const statusCodes = Object.fromEntries(
    Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count ?? 0]),
  );
  return {
    round,
    requestsPerSecond: r.requests.total / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    requests: r.requests.total,
    durationS: r.duration,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    statusCodes,
  };
}

/** Loud failure, with one sample response, when a run saw anything but 200s. */
async function assertAll200(stack: Stack, target: Target, run: RunResult): Promise<void> {
  const others = Object.entries(run.statusCodes).filter(([code]) => code !== '200');
  if (!others.length && run.errors === 0 && run.non2xx === 0) return;
  const res = await fetch(`${target.baseUrl ?? stack.url}${target.path}`, { headers: target.headers });
  throw new Error(
    `${target.name} run ${run.round}: not every response was 200 ` +
    `(status codes ${JSON.stringify(run.statusCodes)}, non-2xx ${run.non2xx}, connection errors ${run.errors}, timeouts ${run.timeouts}); ` +
    `a request now answers ${res.status}: ${(await res.text()).slice(0, 300)}`,
  );
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function summarise(target: Target, runs: RunResult[], transactions: TransactionCount): TargetResult {
  return {
    name: target.name,
    path: target.path,
    requestsPerSecond: mean(runs.map((r) => r.requestsPerSecond)),
    p50Ms: mean(runs.map((r) => r.p50Ms)),
    p99Ms: mean(runs.map((r) => r.p99Ms)),
    non2xx: sum(runs.map((r) => r.non2xx)),
    errors: sum(runs.map((r) => r.errors)),
    runs,
    transactions,
  };
}

// ---------------------------------------------------------------- database transactions

export interface TransactionCount {
  requests: number;
  /** Δ(xact_commit + xact_rollback) of the stack's database. */
  transactions: number;
  /** Δsessions: connections the bridge opened meanwhile; each cost one start-up transaction, subtracted. */
  sessions: number;
  perRequest: number;
}

/**
 * Database transactions per request, from pg_stat_database, over `n` sequential
 * requests. Each Neon HTTP query (and each batch) is one transaction, so this
 * counts the Worker's round trips to the database.
 *
 * Backends report their counters to the cumulative statistics lazily (up to
 * ~10 s after going idle) but always on exit, so the bridge's pooled
 * connections are terminated before each reading; the pool reconnects on the
 * next query, and as a new connection's start-up counts as one transaction,
 * new sessions are subtracted. The monitor connects to another database so its
 * own queries are not counted, and autovacuum (whose workers' transactions
 * would count) is off meanwhile.
 */
async function countTransactions(stack: Stack, target: Target, n: number): Promise<TransactionCount> {
  const database = decodeURIComponent(new URL(stack.databaseUrl).pathname.slice(1));
  const monitor = new pg.Client({ connectionString: stack.postgres.url('postgres') });
  await monitor.connect();
  try {
    await monitor.query('ALTER SYSTEM SET autovacuum = off');
    await monitor.query('SELECT pg_reload_conf()');
    const reading = async () => {
      await sleep(300); // last-used writes run after the response (waitUntil)
      await monitor.query(
        `SELECT pg_terminate_backend(pid, 5000) FROM pg_stat_activity
          WHERE datname = $1 AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        [database],
      );
      await monitor.query('SELECT pg_stat_clear_snapshot()');
      const { rows } = await monitor.query<{ xacts: string; sessions: string }>(
        'SELECT xact_commit + xact_rollback AS xacts, sessions FROM pg_stat_database WHERE datname = $1',
        [database],
      );
      return { xacts: Number(rows[0]!.xacts), sessions: Number(rows[0]!.sessions) };
    };

    const before = await reading();
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${target.baseUrl ?? stack.url}${target.path}`, { headers: target.headers });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`${target.name}: sequential request ${i + 1} answered ${res.status}`);
    }
    const after = await reading();
    const transactions = after.xacts - before.xacts;
    const sessions = after.sessions - before.sessions;
    return { requests: n, transactions, sessions, perRequest: (transactions - sessions) / n };
  } finally {
    await monitor.query('ALTER SYSTEM RESET autovacuum').catch(() => {});
    await monitor.query('SELECT pg_reload_conf()').catch(() => {});
    await monitor.end();
  }
}

// ---------------------------------------------------------------- output

function printTable(targets: TargetResult[]): void {
  const header = ['target', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors', 'req/s per round'];
  const rows = targets.map((t) => [
    t.name,
    t.requestsPerSecond.toFixed(0),
    t.p50Ms.toFixed(1),
    t.p99Ms.toFixed(1),
    String(t.non2xx),
    String(t.errors),
    t.runs.map((r) => r.requestsPerSecond.toFixed(0)).join(', '),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}

const fmtLoad = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');

function gitInfo(): { commit: string; dirty: boolean } | null {
  try {
    const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain'], { cwd: repoRoot, encoding: 'utf8' }).trim() !== '';
    return { commit, dirty };
  } catch {
    return null;
  }
}
