// The watchdog process of `pnpm dev` (watchdog.ts starts it): while its
// parent runs it records the parent's descendants in `<data dir>/stack.pids`
// every half second; when the parent is gone (its end of our stdin closes,
// however it died, SIGKILL included) it ends the ones still running and exits.
// Node has no prctl(PR_SET_PDEATHSIG) for the children we cannot change
// (PostgreSQL, wrangler's workerd): this is its stand-in.
import { descendants, endProcesses, processInfo, readStackPids, removeStackPids, writeStackPids, type StackProcess } from './stack-processes.js';

const dataDir = process.argv[2]!;
const parentPid = process.ppid;
const parent = processInfo(parentPid);
let recorded: StackProcess[] = [];
let ending = false;

function snapshot(): void {
  if (ending || !parent) return;
  const now = descendants(parentPid, [process.pid]);
  // Kept: a process seen once is ended too, even if it has since moved out of the tree.
  const known = new Set(recorded.map((p) => `${p.pid}:${p.start}`));
  const added = now.filter((p) => !known.has(`${p.pid}:${p.start}`));
  if (added.length === 0) return;
  recorded = [...recorded, ...added];
  writeStackPids(dataDir, { parent, processes: recorded });
}

async function end(): Promise<void> {
  if (ending) return;
  snapshot();
  ending = true;
  await endProcesses(parentPid, recorded);
  // Only our own record: a new start may already have written its own.
  if (readStackPids(dataDir)?.parent.pid === parentPid) removeStackPids(dataDir);
  process.exit(0);
}

if (!parent) process.exit(0);
const timer = setInterval(() => {
  if (processInfo(parentPid)?.start !== parent!.start) void end();
  else snapshot();
}, 500);
void timer;
process.stdin.on('end', () => void end());
process.stdin.on('error', () => void end());
process.stdin.resume();
snapshot();
