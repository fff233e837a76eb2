// Load runs with autocannon, and their summary per target.
import autocannon from 'autocannon';
import type { Stack } from '../../edge/local/stack.js';
import type { RunResult, Target, TargetResult, TransactionCount } from './types.js';

export function loadTarget(stack: Stack, target: Target, duration: number, connections: number): Promise<autocannon.Result> {
  return autocannon({
    url: `${target.baseUrl ?? stack.url}${target.path}`,
    method: target.method ?? 'GET',
    body: target.body,
    headers: target.headers,
    connections,
    duration,
    // In a worker thread, so the load generator does not share the event loop
    // of the Neon bridge, which runs in this process.
    workers: 1,
  });
}

export function toRun(round: number, r: autocannon.Result): RunResult {
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

/** Loud failure, with one sample response, when a run saw anything but 200s (201 for POST targets). */
export async function assertAll200(stack: Stack, target: Target, run: RunResult): Promise<void> {
  const expected = target.method === 'POST' ? '201' : '200';
  const others = Object.entries(run.statusCodes).filter(([code]) => code !== expected);
  if (!others.length && run.errors === 0 && run.non2xx === 0) return;
  const res = await fetch(`${target.baseUrl ?? stack.url}${target.path}`, { method: target.method, body: target.body, headers: target.headers });
  throw new Error(
    `${target.name} run ${run.round}: not every response was 200 ` +
    `(status codes ${JSON.stringify(run.statusCodes)}, non-2xx ${run.non2xx}, connection errors ${run.errors}, timeouts ${run.timeouts}); ` +
    `a request now answers ${res.status}: ${(await res.text()).slice(0, 300)}`,
  );
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

export function summarise(target: Target, runs: RunResult[], transactions: TransactionCount): TargetResult {
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
