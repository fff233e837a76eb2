// A real rspamd (Debian's `rspamd` package) for a test or the bench: its own
// throwaway configuration and state directory, one scanning worker on a free
// port of 127.0.0.1, no redis and no network checks. Starts in about a second
// once its pattern caches exist: hyperscan is off for the regular expressions,
// and the multi-pattern databases rspamd compiles anyway (the URL suffix list:
// about 13 s of CPU) are kept in a cache folder shared by every start on this
// machine; the modules that ask DNS or redis are disabled (every lookup would
// wait for its timeout), so what is scored is the message's content and headers.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The rspamd binary, or null when it is not installed (the tests that need it skip). */
export const rspamdBinary: string | null = (() => {
  const found = spawnSync('sh', ['-c', 'command -v rspamd'], { encoding: 'utf8' });
  return found.status === 0 && found.stdout.trim() ? found.stdout.trim() : null;
})();

export interface RunningRspamd {
  url: string;
  port: number;
  /** The main process's pid (its workers are its children). */
  pid: number;
  /** Stops it (SIGTERM, then SIGKILL after 5 s) and waits for the exit. */
  stop(): Promise<void>;
  /** Stops it and removes its directory. */
  dispose(): Promise<void>;
}

/** The modules that would ask DNS, redis or the Internet. */
const DISABLED_MODULES = [
  'rbl', 'spf', 'dkim', 'dmarc', 'arc', 'fuzzy_check', 'asn', 'phishing', 'dkim_signing', 'emails', 'mx_check', 'neural', 'ratelimit',
  'greylist', 'replies', 'history_redis', 'url_redirector', 'dcc', 'metadata_exporter', 'clickhouse', 'elastic', 'multimap', 'hfilter',
];

/** Where compiled pattern databases are kept between starts (rspamd names them by a hash of what they hold). */
const CACHE = join(tmpdir(), 'edgemail-rspamd-cache');
const CACHED = /\.(hs|hsmp|hsmc)$/;

/** Copies the compiled pattern databases `from` one folder `to` another, each file whole (a temporary name, then a rename). */
function copyCaches(from: string, to: string): void {
  try {
    mkdirSync(to, { recursive: true });
    const present = new Set(readdirSync(to));
    for (const name of readdirSync(from)) {
      if (!CACHED.test(name) || present.has(name)) continue;
      const partial = join(to, `.${name}.${process.pid}`);
      copyFileSync(join(from, name), partial);
      renameSync(partial, join(to, name));
    }
  } catch {
    // A cache is only a shortcut: rspamd compiles what it does not find.
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * @example const rspamd = await startRspamd(); // rspamd.url → http://127.0.0.1:<port>
 */
export async function startRspamd(): Promise<RunningRspamd> {
  if (!rspamdBinary) throw new Error('rspamd is not installed');
  const dir = mkdtempSync(join(tmpdir(), 'rspamd-'));
  for (const sub of ['local.d', 'db', 'run']) mkdirSync(join(dir, sub));
  copyCaches(CACHE, join(dir, 'db'));
  for (const module of DISABLED_MODULES) writeFileSync(join(dir, 'local.d', `${module}.conf`), 'enabled = false;\n');
  const port = await freePort();
  writeFileSync(join(dir, 'rspamd.conf'), `
.include "$CONFDIR/common.conf"
options {
  pidfile = "$RUNDIR/rspamd.pid";
  .include "$CONFDIR/options.inc"
  filters = "chartable,regexp";
  disable_hyperscan = true;
  dns { nameserver = ["127.0.0.1:1"]; timeout = 0.1s; retransmits = 1; }
  control_socket = "";
  rrd = "";
  history_file = "";
}
logging { type = "console"; level = "error"; }
worker "normal" {
  bind_socket = "127.0.0.1:${port}";
  count = 1;
  .include "$CONFDIR/worker-normal.inc"
}
`);
  const child: ChildProcess = spawn(rspamdBinary, [
    '-f', '-i', '-c', join(dir, 'rspamd.conf'),
    '--var', `LOCAL_CONFDIR=${dir}`, '--var', `DBDIR=${join(dir, 'db')}`, '--var', `RUNDIR=${join(dir, 'run')}`, '--var', `LOGDIR=${dir}`,
  ], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => { stderr = (stderr + chunk.toString()).slice(-4000); });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(killer);
  };
  // The first start on a machine compiles the caches (a minute on a loaded one).
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`rspamd exited with ${child.exitCode}: ${stderr}`);
    const ping = await fetch(`${url}/ping`, { signal: AbortSignal.timeout(1000) }).then((r) => r.ok, () => false);
    if (ping) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`rspamd did not answer /ping within 120 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  copyCaches(join(dir, 'db'), CACHE);
  return {
    url, port, pid: child.pid!, stop,
    async dispose() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The CPU seconds (user + system) rspamd's main process and its workers used so far, from /proc (Linux). */
export function rspamdCpuSeconds(mainPid: number): number {
  const pids = [mainPid, ...childPids(mainPid)];
  const ticks = pids.reduce((sum, pid) => sum + processTicks(pid), 0);
  return ticks / 100; // USER_HZ: 100 on Linux
}

function childPids(pid: number): number[] {
  const read = (path: string) => { try { return readFileSync(path, 'utf8'); } catch { return ''; } };
  const tasks = (() => { try { return readdirSync(`/proc/${pid}/task`); } catch { return []; } })();
  return tasks.flatMap((task) => read(`/proc/${pid}/task/${task}/children`).split(/\s+/).filter(Boolean).map(Number));
}

function processTicks(pid: number): number {
  let stat: string;
  try { stat = readFileSync(`/proc/${pid}/stat`, 'utf8'); } catch { return 0; }
  // Fields after the command name (which may hold spaces, in parentheses): utime is the 14th field, stime the 15th.
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Number(rest[11] ?? 0) + Number(rest[12] ?? 0);
}
