// The processes `pnpm dev` starts (PostgreSQL, workerd and whatever they
// spawn), recorded in `<data dir>/stack.pids` by its watchdog (watchdog.ts),
// so that they end with it and a later start can find what a crash left.
// Linux: read from /proc. A pid alone could name another process once it is
// reused; each one is recorded with its start time, and only a process with
// both is ever signalled.
import { readdirSync, readFileSync, rmSync, renameSync, writeFileSync } from 'node:fs';

/** One process: its pid, its start time (clock ticks since boot, /proc/<pid>/stat field 22) and its name. */
export interface StackProcess {
  pid: number;
  start: number;
  name: string;
  /** Its parent when it was recorded. */
  ppid: number;
}

/** What `stack.pids` holds: the `pnpm dev` process and its descendants. */
export interface StackPids {
  parent: StackProcess;
  processes: StackProcess[];
}

export const stackPidsFile = (dataDir: string) => `${dataDir.replace(/\/+$/, '')}/stack.pids`;

/** The process `pid` as /proc shows it now, or null when there is none (or no /proc). */
export function processInfo(pid: number): StackProcess | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // `pid (name) state ppid …`: the name may hold spaces and parentheses, so split after the last `)`.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    if (fields[0] === 'Z') return null; // a zombie is gone already
    return { pid, name: stat.slice(stat.indexOf('(') + 1, close), ppid: Number(fields[1]), start: Number(fields[19]) };
  } catch {
    return null;
  }
}

/** Whether `recorded` still runs: the same pid with the same start time. */
export const stillRunning = (recorded: StackProcess): boolean => processInfo(recorded.pid)?.start === recorded.start;

/** Every process descending from `root` (children, their children, …), but `exclude`. */
export function descendants(root: number, exclude: number[] = []): StackProcess[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const all = entries.filter((e) => /^\d+$/.test(e)).map((e) => processInfo(Number(e))).filter((p): p is StackProcess => p !== null);
  const children = new Map<number, StackProcess[]>();
  for (const p of all) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p]);
  const found: StackProcess[] = [];
  const queue = [root];
  while (queue.length) {
    for (const child of children.get(queue.shift()!) ?? []) {
      if (exclude.includes(child.pid)) continue;
      found.push(child);
      queue.push(child.pid);
    }
  }
  return found;
}

export function writeStackPids(dataDir: string, record: StackPids): void {
  const file = stackPidsFile(dataDir);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record)}\n`, { mode: 0o644 });
  renameSync(tmp, file);
}

export function readStackPids(dataDir: string): StackPids | null {
  try {
    const parsed = JSON.parse(readFileSync(stackPidsFile(dataDir), 'utf8')) as StackPids;
    return parsed.parent && Array.isArray(parsed.processes) ? parsed : null;
  } catch {
    return null;
  }
}

export const removeStackPids = (dataDir: string) => rmSync(stackPidsFile(dataDir), { force: true });

/**
 * Ends the recorded processes that still run: PostgreSQL's server (a
 * `postgres` started by the stack itself) gets SIGINT, its fast shutdown,
 * the others SIGTERM; whatever still runs after `graceMs` gets SIGKILL.
 * @returns those that were running
 */
export async function endProcesses(parent: number, processes: StackProcess[], graceMs = 5_000): Promise<StackProcess[]> {
  const running = processes.filter(stillRunning);
  const signal = (p: StackProcess, name: NodeJS.Signals) => {
    try { process.kill(p.pid, name); } catch { /* gone meanwhile */ }
  };
  for (const p of running) {
    // A postgres server's own children (backends, checkpointer) end with it.
    if (p.name === 'postgres' && p.ppid !== parent) continue;
    signal(p, p.name === 'postgres' ? 'SIGINT' : 'SIGTERM');
  }
  for (const deadline = Date.now() + graceMs; Date.now() < deadline && running.some(stillRunning);) {
    await new Promise((r) => setTimeout(r, 100));
  }
  for (const p of running.filter(stillRunning)) signal(p, 'SIGKILL');
  return running;
}
