// CPU time of the processes the bench started, by name, from /proc (Linux):
// for the inbound bench's CPU per stored message across the whole stack, not
// just the relay node (workerd runs the Worker and wrangler's proxy; postgres
// its backends). A process that exits between two readings takes its time
// with it, so read around spans in which they all keep running.
import { readdirSync, readFileSync } from 'node:fs';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** utime + stime of every descendant of `root` whose name is one of `names`, in ms, summed per name. */
export function descendantsCpuMs(names: string[], root = process.pid): Record<string, number> {
  const parent = new Map<number, number>();
  const info = new Map<number, { name: string; ms: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    // pid (comm) state ppid … utime(14) stime(15): comm may hold spaces, so cut after its last ')'.
    const close = stat.lastIndexOf(')');
    const name = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    parent.set(Number(entry), Number(fields[1]));
    info.set(Number(entry), { name, ms: (Number(fields[11]) + Number(fields[12])) * TICK_MS });
  }
  const out: Record<string, number> = Object.fromEntries(names.map((n) => [n, 0]));
  for (const [pid, { name, ms }] of info) {
    if (!names.includes(name)) continue;
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p === root) {
        out[name]! += ms;
        break;
      }
    }
  }
  return out;
}
