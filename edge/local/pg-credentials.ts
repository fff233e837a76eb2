// The local server's two logins, generated once per data directory and kept
// beside it (`.data/pg-credentials.json`, mode 0600): a superuser for the stack
// and test set-up only, and the application role the Worker, the operator
// binary and the tests use. Light on imports: the binary reads it too.
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface PgLogin {
  user: string;
  password: string;
}

export interface PgCredentials {
  /** Creates databases and roles; never handed to the Worker. */
  superuser: PgLogin;
  /** No superuser, no CREATEDB/CREATEROLE: owns the application databases. */
  app: PgLogin;
}

export const SUPERUSER = 'postgres';
export const APP_ROLE = 'edgemail';

/** Where `pnpm dev` keeps its data, and where the binary looks for it. */
export function localDataDir(): string {
  return process.env.EDGEMAIL_DATA_DIR ?? fileURLToPath(new URL('../../.data', import.meta.url));
}

/** The credentials of the PostgreSQL data directory `pgDataDir` (as asked for, before any move). */
export function credentialsFile(pgDataDir: string): string {
  return `${pgDataDir.replace(/\/+$/, '')}-credentials.json`;
}

export function readCredentials(file: string): PgCredentials {
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<PgCredentials>;
  if (!parsed.superuser?.password || !parsed.app?.password) throw new Error(`${file} lacks a password`);
  return parsed as PgCredentials;
}

/**
 * The file's credentials, made on first use. Random per install so that no
 * page, script or other user on the machine can guess a login.
 */
export function loadOrCreateCredentials(file: string): PgCredentials {
  if (existsSync(file)) {
    chmodSync(file, 0o600); // a copy made with looser rights is tightened
    return readCredentials(file);
  }
  // base64url: safe in URLs and SQL literals without quoting.
  const secret = () => randomBytes(24).toString('base64url');
  const credentials: PgCredentials = {
    superuser: { user: SUPERUSER, password: secret() },
    app: { user: APP_ROLE, password: secret() },
  };
  // Written whole under a temporary name, so a crash never leaves half a file.
  const tmp = `${file}.${process.pid}.tmp`;
  rmSync(tmp, { force: true });
  writeFileSync(tmp, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  renameSync(tmp, file);
  return credentials;
}

/** A `postgres://` URL on the loopback server. */
export function pgUrl(login: PgLogin, port: number, database: string): string {
  return `postgres://${encodeURIComponent(login.user)}:${encodeURIComponent(login.password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}
