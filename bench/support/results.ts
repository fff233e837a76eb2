// The record every benchmark leaves: its figures as JSON in bench/results/
// (git-ignored), with the commit, the machine and its load around the run,
// and the load line printed beneath the figures.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { repoRoot } from '../../edge/local/edge-worker.js';

export interface RunClock { startedAt: Date; loadBefore: number[] }

/** Call when the benchmark starts. */
export const startRun = (): RunClock => ({ startedAt: new Date(), loadBefore: os.loadavg() });

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

/**
 * Prints the machine line and writes `bench/results/<name>-<time>.json` with `figures`.
 * @example finishRun('send', clock, { options: flags, api, delivery });
 */
export function finishRun(name: string, clock: RunClock, figures: Record<string, unknown>): void {
  const loadAfter = os.loadavg();
  console.log(`machine: ${os.cpus().length} cpus, load average ${fmtLoad(clock.loadBefore)} before, ${fmtLoad(loadAfter)} after`);
  const file = `${repoRoot}bench/results/${name}-${clock.startedAt.toISOString().replace(/[:.]/g, '-')}.json`;
  mkdirSync(`${repoRoot}bench/results`, { recursive: true });
  writeFileSync(file, `${JSON.stringify({
    benchmark: name,
    startedAt: clock.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    git: gitInfo(),
    machine: { cpus: os.cpus().length, node: process.version, loadavgBefore: clock.loadBefore, loadavgAfter: loadAfter },
    ...figures,
  }, null, 2)}\n`);
  console.log(`results: ${file.slice(repoRoot.length)}`);
}
