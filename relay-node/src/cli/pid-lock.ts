// One process per state directory (`start` and `drain`): two on one spool
// would forward every message twice. A pid file: a crash leaves it behind,
// and a pid that no longer runs does not hold the directory.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export class StateDirBusyError extends Error {}

function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes `<stateDir>/edgemail-relay.pid` for this process; the release. Throws StateDirBusyError naming the holder. */
export function lockStateDir(stateDir: string, what: string): () => void {
  const file = join(stateDir, 'edgemail-relay.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return () => rmSync(file, { force: true });
    } catch (err) {
      // No directory: nothing is enrolled there, which the command itself says better.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return () => undefined;
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && running(holder)) {
        throw new StateDirBusyError(`cannot ${what}: process ${holder} is running a relay node on ${stateDir} (${file}); stop it first (systemctl stop edgemail-relay)`);
      }
      rmSync(file, { force: true }); // left by a process that is gone
    }
  }
  throw new StateDirBusyError(`cannot ${what}: ${file} keeps coming back`);
}
