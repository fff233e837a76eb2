// `pnpm bench analytics`: latency of GET /api/v1/analytics over a 90-day
// range for a project holding a million emails, through the whole local stack
// (autocannon → workerd → Neon bridge → PostgreSQL), beside GET /health in the
// same run. The emails are written through the real tables by SQL
// (generate_series), so migration 0009's triggers fill the aggregate the route
// reads, as sends would. For contrast, the same question asked naively (a
// count over `emails`) and over the aggregate, timed directly in PostgreSQL.
import pg from 'pg';
import { numberFlags } from './args.js';
import { finishRun, startRun } from './support/results.js';
import { bootstrap, withStack } from './support/stack.js';
import { assertAll200, loadTarget, toRun } from './support/load.js';
import type { Stack } from '../edge/local/stack.js';
import type { RunResult, Target } from './support/types.js';

const DEFAULTS = { rows: 1_000_000, days: 90, duration: 10, warmup: 2, connections: 8, rounds: 2, samples: 5 };
/**
 * The goal is read one request at a time: the latency a reporting job or a
 * dashboard sees, which the aggregate decides. With \`connections\` in flight
 * the figure is the machine's queue (two cores shared by workerd, the bridge,
 * PostgreSQL and the load generator), printed beside it for what it is.
 */
const GOAL_CONNECTIONS = 1;
type Options = typeof DEFAULTS;

/** The goal: the route's p99 over a 90-day range at a million rows, on the local stack. */
const GOAL_P99_MS = 200;
/** Recipients per message in the fill (each message is one row of outbound_messages). */
const RECIPIENTS = 10;
/** Rows per INSERT statement of the fill: each one fires the trigger once. */
const CHUNK = 100_000;

const DOMAINS = ['acme.test', 'news.acme.test'];
const TAGS = ['welcome', 'receipt', 'digest', 'promo', 'reset'];

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

export async function runAnalyticsBench(argv: string[]): Promise<void> {
  const o = numberFlags(argv, DEFAULTS);
  const clock = startRun();
  console.error(
    `bench analytics: ${o.rows} email rows over ${o.days} days, ${o.connections} connections, ` +
    `${o.rounds} rounds × ${o.duration}s per target (+${o.warmup}s warm-up)`,
  );
  const result = await withStack({ SERVICE_RATELIMIT_API_PER_MINUTE: '1000000000' }, async (stack) => {
    const tenant = await bootstrap(stack);
    const token = await analyticsKey(stack, tenant.platformToken, tenant.projectId);
    const fill = await fillEmails(stack, tenant.projectId, o);

    const range = `from=${day(Date.now() - (o.days - 1) * 86_400_000)}&to=${day(Date.now())}`;
    const auth = { authorization: `Bearer ${token}` };
    const targets: Target[] = [
      { name: 'health', path: '/health' },
      { name: `analytics ${o.days} days`, path: `/api/v1/analytics?${range}`, headers: auth, requireAll200: true },
      { name: `analytics ${o.days} days, domain and tag`, path: `/api/v1/analytics?${range}&domain=${DOMAINS[0]}&tag=${TAGS[0]}`, headers: auth, requireAll200: true },
    ];
    // The answer first: every row of the fill counted, read from the aggregate.
    const answer = await (await fetch(`${stack.url}${targets[1]!.path}`, { headers: auth })).json() as { analytics: { totals: Record<string, number>; days: unknown[] } };
    const counted = Object.values(answer.analytics.totals).reduce((a, b) => a + b, 0);
    if (counted !== o.rows) throw new Error(`the analytics route counted ${counted} emails of the ${o.rows} written`);
    console.error(`  the route counts all ${counted} emails over ${answer.analytics.days.length} days`);

    for (const t of targets) await loadTarget(stack, t, o.warmup, o.connections);
    const measured: { name: string; path: string; connections: number; runs: RunResult[] }[] = [];
    for (const connections of [GOAL_CONNECTIONS, o.connections]) {
      const runs = new Map<Target, RunResult[]>(targets.map((t) => [t, []]));
      for (let round = 1; round <= o.rounds; round++) {
        for (const t of targets) {
          const run = toRun(round, await loadTarget(stack, t, o.duration, connections));
          console.error(`  ${connections} connections, round ${round} ${t.name}: ${run.requestsPerSecond.toFixed(0)} req/s, p50 ${run.p50Ms} ms, p99 ${run.p99Ms} ms`);
          if (t.requireAll200) await assertAll200(stack, t, run);
          runs.get(t)!.push(run);
        }
      }
      measured.push(...targets.map((t) => ({ name: t.name, path: t.path, connections, runs: runs.get(t)! })));
    }
    const direct = await directQueries(stack, tenant.projectId, o);
    return { fill, targets: measured, direct };
  });

  const worst = (runs: RunResult[], pick: (r: RunResult) => number) => Math.max(...runs.map(pick));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log('');
  console.log(`fill: ${o.rows} emails (${o.rows / RECIPIENTS} messages) in ${result.fill.seconds.toFixed(1)} s through the triggers; ` +
    `aggregate ${result.fill.aggregateRows} rows; emails table ${result.fill.emailsSize}, aggregate ${result.fill.aggregateSize}`);
  console.log('');
  const header = ['target', 'connections', 'req/s', 'p50 ms', 'p99 ms', 'worst round p99'];
  const rows = result.targets.map((t) => [
    t.name, String(t.connections), mean(t.runs.map((r) => r.requestsPerSecond)).toFixed(0), mean(t.runs.map((r) => r.p50Ms)).toFixed(1),
    mean(t.runs.map((r) => r.p99Ms)).toFixed(1), worst(t.runs, (r) => r.p99Ms).toFixed(1),
  ]);
  printTable(header, rows);
  console.log('');
  console.log(`the same ${o.days}-day question in PostgreSQL directly, ${o.samples} times each (ms):`);
  printTable(['query', 'p50 ms', 'max ms'], result.direct.map((d) => [d.name, d.p50.toFixed(1), d.max.toFixed(1)]));
  console.log('');
  const route = result.targets.find((t) => t.connections === GOAL_CONNECTIONS && t.path.startsWith('/api/v1/analytics'))!;
  const loaded = result.targets.find((t) => t.connections === o.connections && t.path.startsWith('/api/v1/analytics'))!;
  const p99 = mean(route.runs.map((r) => r.p99Ms));
  const pass = p99 < GOAL_P99_MS;
  const loadedP99 = mean(loaded.runs.map((r) => r.p99Ms));
  console.log(`goal: analytics p99 over ${o.days} days at ${o.rows} emails, a request at a time, < ${GOAL_P99_MS} ms: ${p99.toFixed(1)} ms: ${pass ? 'PASS' : 'BELOW'}`);
  console.log(`  with ${o.connections} in flight: p99 ${loadedP99.toFixed(1)} ms (${loadedP99 < GOAL_P99_MS ? 'under' : 'over'} ${GOAL_P99_MS} ms)`);
  finishRun('analytics', clock, { options: o, goal: { p99Ms: GOAL_P99_MS, connections: GOAL_CONNECTIONS, measuredP99Ms: p99, pass, loadedP99Ms: loadedP99 }, ...result });
}

/** A key holding `analytics:read` only, minted with the platform credential as the README's walk-through does. */
async function analyticsKey(stack: Stack, platformToken: string, projectId: string): Promise<string> {
  const res = await fetch(`${stack.url}/api/v1/api-keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${platformToken}`, 'x-service-project-id': projectId, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'reporting', permissions: ['analytics:read'] }),
  });
  if (res.status !== 201) throw new Error(`creating the analytics key answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/**
 * `rows` emails of one project, created over the last `days` days: messages
 * from two domains with 0 to 2 tags, ten recipients each, statuses in the
 * proportions of a healthy sender. Inserted in chunks, each one statement,
 * so the insert trigger runs once per chunk as it would for a large batch.
 */
async function fillEmails(stack: Stack, projectId: string, o: Options) {
  return withClient(stack, async (c) => {
    const started = performance.now();
    const messages = Math.ceil(o.rows / RECIPIENTS);
    const perChunk = CHUNK / RECIPIENTS;
    for (let first = 0; first < messages; first += perChunk) {
      const last = Math.min(messages, first + perChunk) - 1;
      await c.query(`
        WITH m AS (
          INSERT INTO outbound_messages (project_id, message_id, "from", subject, tags, created_at)
          SELECT $1, '<bench-' || i || '@' || ($5::text[])[1 + i % 2] || '>', 'News <news@' || ($5::text[])[1 + i % 2] || '>', 'bench ' || i,
                 array_remove(array[CASE WHEN i % 3 > 0 THEN ($6::text[])[1 + i % 5] END, CASE WHEN i % 3 = 2 THEN ($6::text[])[1 + (i / 5) % 5] END], NULL),
                 now() - random() * make_interval(days => $4 - 1)
            FROM generate_series($2::int, $3::int) AS i
          RETURNING id, created_at
        )
        INSERT INTO emails (project_id, message_id, recipient, kind, status, created_at)
        SELECT $1, m.id, 'r' || r || '@example.org', 'to',
               (CASE WHEN x < 0.90 THEN 'sent' WHEN x < 0.93 THEN 'bounced' WHEN x < 0.95 THEN 'failed' WHEN x < 0.952 THEN 'complained'
                     WHEN x < 0.97 THEN 'suppressed' WHEN x < 0.99 THEN 'queued' ELSE 'captured' END)::email_status,
               m.created_at
          FROM m CROSS JOIN generate_series(1, ${RECIPIENTS}) AS r CROSS JOIN LATERAL (SELECT random() + r * 0 AS x) AS pick`,
      [projectId, first, last, o.days, DOMAINS, TAGS]);
      process.stderr.write(`\r  fill: ${Math.min(o.rows, (last + 1) * RECIPIENTS)} / ${o.rows} emails`);
    }
    process.stderr.write('\n');
    await c.query('VACUUM ANALYZE emails');
    await c.query('VACUUM ANALYZE outbound_messages');
    await c.query('VACUUM ANALYZE email_daily_counts');
    const seconds = (performance.now() - started) / 1000;
    const { rows: [sizes] } = await c.query(`SELECT
        (SELECT count(*) FROM emails WHERE project_id = $1)::int AS emails,
        (SELECT count(*) FROM email_daily_counts WHERE project_id = $1)::int AS aggregate_rows,
        pg_size_pretty(pg_total_relation_size('emails')) AS emails_size,
        pg_size_pretty(pg_total_relation_size('email_daily_counts')) AS aggregate_size`, [projectId]);
    if (sizes.emails !== o.rows) throw new Error(`the fill wrote ${sizes.emails} emails, not ${o.rows}`);
    return { seconds, aggregateRows: sizes.aggregate_rows as number, emailsSize: sizes.emails_size as string, aggregateSize: sizes.aggregate_size as string };
  });
}

/** The route's question over the aggregate (what the service runs) and naively over `emails`, timed in PostgreSQL. */
async function directQueries(stack: Stack, projectId: string, o: Options) {
  const from = day(Date.now() - (o.days - 1) * 86_400_000);
  const queries = [
    {
      name: 'aggregate (the route\'s query)',
      text: `SELECT day, status, sum(count) FROM email_daily_counts
              WHERE project_id = $1 AND day BETWEEN $2::date AND current_date AND tag = '' GROUP BY day, status`,
    },
    {
      name: 'naive count over emails',
      text: `SELECT (created_at AT TIME ZONE 'UTC')::date AS day, status, count(*) FROM emails
              WHERE project_id = $1 AND created_at >= $2::date GROUP BY 1, 2`,
    },
  ];
  return withClient(stack, async (c) => {
    const out: { name: string; p50: number; max: number; samples: number[] }[] = [];
    for (const q of queries) {
      const samples: number[] = [];
      for (let i = 0; i < o.samples; i++) {
        const t = performance.now();
        await c.query(q.text, [projectId, from]);
        samples.push(performance.now() - t);
      }
      const sorted = [...samples].sort((a, b) => a - b);
      out.push({ name: q.name, p50: sorted[Math.floor(sorted.length / 2)]!, max: sorted.at(-1)!, samples });
      console.error(`  ${q.name}: ${sorted.map((s) => s.toFixed(1)).join(', ')} ms`);
    }
    return out;
  });
}

async function withClient<T>(stack: Stack, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: stack.databaseUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
  console.log(line(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const r of rows) console.log(line(r));
}
