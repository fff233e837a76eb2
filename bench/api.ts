// `pnpm bench api`: throughput of the cheapest route (GET /health, no auth, no
// database) against an authenticated API route (GET /api/v1/api-keys with a
// project API key: the key's ApiKeyGate (its rate window and its read) + list
// query over the Neon bridge), on one throwaway local stack, plus the database
// transactions an authenticated request costs, one request at a time and with
// as many in flight as the load has. A second Worker on the same database runs
// with the rate limiter off, so the limiter's cost is measured in the same
// rounds. The machine is shared, so the figures that matter are the ratios.
import { startEdgeWorker } from '../edge/local/edge-worker.js';
import { finishRun, startRun } from './support/results.js';
import { numberFlags } from './args.js';
import { benchSettings, bootstrap, cleanups, withStack } from './support/stack.js';
import { assertAll200, loadTarget, summarise, toRun } from './support/load.js';
import { countTransactions } from './support/transactions.js';
import type { LoadOptions, Measurement, RunResult, Target, TargetResult, Tenant, TransactionCount } from './support/types.js';

// ---------------------------------------------------------------- options

const DEFAULTS: LoadOptions = { duration: 10, warmup: 2, connections: 32, rounds: 2, sequential: 200 };

/** Authenticated throughput should keep at least this share of /health throughput. */
const GOAL_RATIO = 0.6;
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

/** The pair this benchmark compares; a later pair (other settings) reuses it. */
export const apiTargets = (tenant: Tenant, variants: Record<string, string>): Target[] => {
  const authenticated = { path: '/api/v1/api-keys', headers: { authorization: `Bearer ${tenant.keys[0]!.token}` }, requireAll200: true };
  return [
    { name: 'health', path: '/health' },
    { name: 'authenticated', ...authenticated },
    { name: 'authenticated, limiter off', ...authenticated, baseUrl: variants['limiter off'] },
  ];
};

// ---------------------------------------------------------------- the benchmark

export async function runApiBench(argv: string[]): Promise<void> {
  const load = numberFlags(argv, DEFAULTS);
  const clock = startRun();
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
  const loaded = main.transactionsUnderLoad;
  console.log(
    `database transactions per authenticated request: ${tx.perRequest.toFixed(2)} one at a time, ` +
    `${loaded[auth.name]!.perRequest.toFixed(2)} with ${load.connections} in flight ` +
    `(limiter off: ${loaded[authOff.name]!.perRequest.toFixed(2)}; health: ${health.transactions.perRequest.toFixed(2)})`,
  );
  console.log(
    `  pg_stat_database over ${tx.requests} sequential and ${loaded[auth.name]!.requests} concurrent requests: ` +
    `commits+rollbacks less one per new bridge connection. Each Neon HTTP query is one transaction, so this ` +
    `is the database round trips per request: one at a time ~2 (the key's read, the list query), plus at most ` +
    `one last-used write per key per minute; in flight, requests for the key that reach its ApiKeyGate while ` +
    `a read runs share the next one, so fewer.`,
  );
  finishRun('api', clock, {
    options: load,
    goal: { ratio: GOAL_RATIO, authenticatedOverHealth: ratio, pass },
    limiterGoal: { ratio: LIMITER_GOAL_RATIO, limiterOnOverOff: limiterRatio, pass: limiterPass },
    transactionsPerRequest: {
      sequential: tx.perRequest,
      inFlight: load.connections,
      underLoad: loaded[auth.name]!.perRequest,
      underLoadLimiterOff: loaded[authOff.name]!.perRequest,
    },
    measurements: [main],
  });
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
): Promise<Measurement & { transactionsUnderLoad: Record<string, TransactionCount> }> {
  return withStack(settings, async (stack) => {
    const tenant = await bootstrap(stack);
    const variantUrls: Record<string, string> = {};
    const variantStops: (() => Promise<void>)[] = [];
    try {
    for (const [name, extra] of Object.entries(variants)) {
      console.error(`  starting a second Worker: ${name}`);
      const worker = await startEdgeWorker({
        vars: { SERVICE_DATABASE_URL: stack.databaseUrl, ...benchSettings(settings), ...extra, LOCAL_NEON_BRIDGE: stack.bridge.url },
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
    // And for the authenticated targets, with the load's connection count in flight.
    const transactionsUnderLoad: Record<string, TransactionCount> = {};
    for (const t of targets.filter((target) => target.requireAll200)) {
      const n = 5 * load.sequential;
      console.error(`  counting transactions: ${n} ${t.name} requests, ${load.connections} in flight`);
      transactionsUnderLoad[t.name] = await countTransactions(stack, t, n, load.connections);
    }

    return {
      settings,
      targets: targets.map((t) => summarise(t, runs.get(t)!, counted.get(t)!)),
      transactionsUnderLoad,
    };
    } finally {
      await Promise.allSettled(variantStops.map((stop) => stop()));
    }
  });
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

