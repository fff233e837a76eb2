// `pnpm dev`'s children end with it (docs/local-stack.md, "When pnpm dev
// dies"): a SIGKILL of the dev process alone (not its process group) used to
// leave PostgreSQL and workerd running, the edge answering 500s and the next
// start blocked by them. Now its watchdog ends them within seconds; and when
// even the watchdog was killed, the next start ends what was left and names it
// (but never a pnpm dev still running on the same data).
import { readFileSync, rmSync, mkdtempSync } from 'node:fs';
import { afterAll, expect, test } from 'vitest';
import { freePort } from './support/global-setup.js';
import { reachableByPostgres } from '../edge/local/postgres.js';
import { readStackRecord } from '../edge/local/stack-record.js';
import { descendants, readStackPids, stillRunning, type StackProcess } from '../edge/local/stack-processes.js';
import { eventually } from './support/wait.js';
import { killGroup, listening, ROOT, startPnpmDev, type PnpmDev } from './support/pnpm-dev.js';

const dataDir = mkdtempSync(`${ROOT}.data/dev-orphans-`);
const started: PnpmDev[] = [];
afterAll(async () => {
  for (const dev of started) killGroup(dev.child);
  // The watchdog of the last run ends its PostgreSQL; wait for it before removing the data.
  await new Promise((r) => setTimeout(r, 3000));
  if (process.getuid?.() === 0) rmSync(reachableByPostgres(`${dataDir}/pg`), { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

test('SIGKILL of the dev process alone: PostgreSQL, workerd and the ports are gone within seconds, and the next start comes up', async () => {
  const [pgPort, bridgePort, workerPort, inboundPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const env = {
    EDGEMAIL_DATA_DIR: dataDir, EDGEMAIL_PG_PORT: String(pgPort), EDGEMAIL_BRIDGE_PORT: String(bridgePort), EDGEMAIL_PORT: String(workerPort),
    EDGEMAIL_INBOUND_PORT: String(inboundPort), EDGEMAIL_SUBMISSION_PORT: '0',
  };
  const ports = [pgPort, workerPort, inboundPort];
  const start = async () => {
    const dev = await startPnpmDev(env, { silent: true });
    started.push(dev);
    return dev;
  };
  /** The dev process (not pnpm: the node running edge/local/dev.ts) and what its watchdog recorded. */
  const devProcess = async () => {
    const pid = readStackRecord(dataDir)!.pid;
    // The watchdog records every half second.
    const recorded = await eventually(async () => readStackPids(dataDir), (r) => r?.parent.pid === pid && r.processes.some((p) => p.name === 'postgres'), 10_000);
    return { pid, recorded: recorded!.processes };
  };
  const names = (processes: StackProcess[]) => processes.filter(stillRunning).map((p) => p.name);

  // 1. The dev process dies alone; its watchdog ends PostgreSQL and workerd.
  await start();
  const first = await devProcess();
  expect(names(first.recorded)).toEqual(expect.arrayContaining(['postgres', 'workerd']));
  process.kill(first.pid, 'SIGKILL');
  const gone = await eventually(async () => ({ running: names(first.recorded), open: await Promise.all(ports.map(listening)) }),
    (s) => s.running.length === 0 && s.open.every((o) => !o), 10_000);
  expect(gone).toEqual({ running: [], open: [false, false, false] });

  // 2. The next start comes up on the same data. This time the watchdog dies first, then the dev process:
  // PostgreSQL and workerd are left running, as before this fix.
  const second = await start();
  const run = await devProcess();
  const watchdog = descendants(run.pid).find((p) => readFileSync(`/proc/${p.pid}/cmdline`, 'utf8').includes('watchdog-main'));
  expect(watchdog).toBeDefined();
  process.kill(watchdog!.pid, 'SIGKILL');
  process.kill(run.pid, 'SIGKILL');
  await new Promise((r) => setTimeout(r, 1500));
  expect(names(run.recorded)).toEqual(expect.arrayContaining(['postgres', 'workerd']));
  expect(await listening(pgPort)).toBe(true);
  // (Not killGroup(second.child): PostgreSQL and workerd are in pnpm's process group; pnpm ends on its own.)
  void second;

  // 3. A start ends them, names them in one line, and comes up.
  const third = await start();
  expect(third.output()).toMatch(/ended processes a previous pnpm dev left running on .*: .*postgres \(pid \d+\).*workerd \(pid \d+\)|ended processes a previous pnpm dev left running on .*: .*workerd \(pid \d+\).*postgres \(pid \d+\)/);
  expect(names(run.recorded)).toEqual([]);
  expect(await listening(workerPort)).toBe(true);

  // 4. A start on a data directory whose pnpm dev still runs touches nothing: it names it and stops.
  const live = readStackRecord(dataDir)!.pid;
  await expect(start()).rejects.toThrow(new RegExp(`edgemail: another pnpm dev \\(pid ${live}\\) is running on ${dataDir}`));
  expect(await Promise.all(ports.map(listening))).toEqual([true, true, true]);
  void third;
}, 300_000);
