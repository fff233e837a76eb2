// `pnpm dev`'s children end with it (docs/local-stack.md, "When pnpm dev
// dies"): a watchdog process records them and ends them when `pnpm dev` is
// gone, and a start ends (or names) what an earlier run left behind on its
// data directory.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reachableByPostgres } from './postgres.js';
import { endProcesses, processInfo, readStackPids, removeStackPids, stillRunning, type StackProcess } from './stack-processes.js';

/**
 * Starts the watchdog: detached (its own process group, so a Ctrl-C or a
 * SIGKILL of ours does not reach it), fed a pipe whose end it notices when
 * this process dies, however it dies. Linux only (it reads /proc); elsewhere
 * it exits at once.
 */
export function startWatchdog(dataDir: string): void {
  const main = fileURLToPath(new URL('./watchdog-main.ts', import.meta.url));
  const child = spawn(process.execPath, [...process.execArgv, main, dataDir], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  child.unref();
  // Never written to: only its closing matters. Unreferenced, so it keeps nothing alive.
  (child.stdin as unknown as { unref?: () => void }).unref?.();
  child.stdin!.on('error', () => undefined);
}

/**
 * Before a start: processes a crashed `pnpm dev` left on `dataDir` (those its
 * watchdog recorded in `stack.pids`, and a PostgreSQL server whose
 * `postmaster.pid` names this data directory) are ended, and one line says
 * which. A `pnpm dev` still running on it is not touched: the answer is the
 * line naming it, and the start stops.
 * @returns the line to print, or null when nothing was there
 */
export async function endStaleProcesses(dataDir: string): Promise<{ line: string; fatal: boolean } | null> {
  const record = readStackPids(dataDir);
  if (record && stillRunning(record.parent) && record.parent.pid !== process.pid) {
    return { fatal: true, line: `another pnpm dev (pid ${record.parent.pid}) is running on ${dataDir}: stop it first, or give this one another EDGEMAIL_DATA_DIR` };
  }
  const stale: StackProcess[] = record ? record.processes.filter(stillRunning) : [];
  // Where startPostgres keeps the cluster (as root, possibly moved where the `postgres` user reaches it).
  const wanted = resolve(`${dataDir}/pg`);
  const postmaster = stalePostmaster(process.getuid?.() === 0 ? reachableByPostgres(wanted) : wanted);
  if (postmaster && !stale.some((p) => p.pid === postmaster.pid)) stale.push(postmaster);
  if (record) removeStackPids(dataDir);
  if (stale.length === 0) return null;
  // The postmaster is ended as the stack's own (SIGINT): its parent is gone, so name it as a direct child.
  const parentPid = record?.parent.pid ?? -1;
  const ended = await endProcesses(parentPid, stale.map((p) => (p.name === 'postgres' && p.pid === postmaster?.pid ? { ...p, ppid: parentPid } : p)));
  const named = ended.filter((p) => !(p.name === 'postgres' && p.ppid !== parentPid && p.pid !== postmaster?.pid));
  return { fatal: false, line: `ended processes a previous pnpm dev left running on ${dataDir}: ${named.map((p) => `${p.name} (pid ${p.pid})`).join(', ')}` };
}

/** The PostgreSQL server `<pgDir>/postmaster.pid` names, when it still runs (a `postgres` process on this data directory). */
function stalePostmaster(pgDir: string): StackProcess | null {
  try {
    const [pid, dir] = readFileSync(`${pgDir}/postmaster.pid`, 'utf8').split('\n');
    const info = processInfo(Number(pid));
    return info && info.name === 'postgres' && dir === pgDir ? info : null;
  } catch {
    return null;
  }
}
