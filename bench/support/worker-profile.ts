// `BENCH_WORKER_CPU_PROF=<dir>`: a V8 CPU profile of the Worker's isolate
// while one measured load runs, through wrangler's inspector endpoint, written
// as `<dir>/<label>.cpuprofile` (Chrome DevTools, speedscope) with a summary of
// where the isolate's busy time went printed beside it.
import { mkdirSync, writeFileSync } from 'node:fs';
import type { Stack } from '../../edge/local/stack.js';
import { devtools } from '../../edge/local/devtools.js';

export const workerProfileDir = (): string | undefined => process.env.BENCH_WORKER_CPU_PROF || undefined;

export interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
export interface CpuProfile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number }

/** Runs `load` under the profiler when `BENCH_WORKER_CPU_PROF` is set; otherwise just runs it. */
export async function profiledWorker<T>(stack: Stack, label: string, load: () => Promise<T>): Promise<T> {
  const dir = workerProfileDir();
  const endpoint = stack.worker.inspectorUrl;
  if (!dir || !endpoint) return load();
  const session = await devtools(endpoint);
  try {
    session.tell('Profiler.enable');
    session.tell('Profiler.setSamplingInterval', { interval: 200 });
    session.tell('Profiler.start');
    const result = await load();
    const { profile } = await session.call('Profiler.stop') as { profile: CpuProfile };
    mkdirSync(dir, { recursive: true });
    const file = `${dir}/${label.replace(/[^a-z0-9.-]+/gi, '_')}.cpuprofile`;
    writeFileSync(file, JSON.stringify(profile));
    console.error(`  Worker CPU profile of ${label}: ${file}`);
    console.error(summarise(profile));
    return result;
  } finally {
    session.close();
  }
}

/** Busy share of the wall time, then the top functions by inclusive and by self time. */
export function summarise(profile: CpuProfile, top = 20): string {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n: ProfileNode) => {
    const file = n.callFrame.url.split('/').pop() || '';
    return `${n.callFrame.functionName || '(anonymous)'} ${file}${file ? `:${n.callFrame.lineNumber + 1}` : ''}`;
  };
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let idle = 0;
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i + 1] ?? 0;
    total += dt;
    const leaf = byId.get(id)!;
    if (leaf.callFrame.functionName === '(idle)') { idle += dt; return; }
    self.set(name(leaf), (self.get(name(leaf)) ?? 0) + dt);
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const key = name(byId.get(n)!);
      if (seen.has(key)) continue;
      seen.add(key);
      inclusive.set(key, (inclusive.get(key) ?? 0) + dt);
    }
  });
  const busy = total - idle;
  const rows = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]).slice(0, top)
    .map(([k, v]) => `    ${(100 * v / busy).toFixed(1).padStart(5)}%  ${k}`).join('\n');
  return [
    `  isolate busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s (${(100 * busy / total).toFixed(0)}%)`,
    '  inclusive share of busy time:', rows(inclusive),
    '  self share of busy time:', rows(self),
  ].join('\n');
}
