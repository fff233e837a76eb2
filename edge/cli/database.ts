// The operator binary talks to PostgreSQL directly (it works with the edge
// down). Default: the local stack's database, as its application role, with
// the password `pnpm dev` generated for this install, on the port `pnpm dev`
// recorded in .data/stack.json.
import { existsSync } from 'node:fs';
import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import * as schema from '@edgemail/schema';
import { credentialsFile, localDataDir, pgUrl, readCredentials } from '../local/pg-credentials.js';
import { readStackRecord, stackRecordFile } from '../local/stack-record.js';

const DEFAULT_PG_PORT = 54329;

/** A database to use, and where its address came from (for error messages). */
export interface DatabaseTarget {
  url: string;
  source: string;
}

/** The local stack's database: port from EDGEMAIL_PG_PORT, else what `pnpm dev` recorded, else 54329. */
export function localDatabase(): DatabaseTarget {
  const dataDir = localDataDir();
  const file = credentialsFile(`${dataDir}/pg`);
  if (!existsSync(file)) {
    throw new Error(`no local database credentials in ${file}: start the local stack once (pnpm dev), or pass --database-url`);
  }
  const recorded = readStackRecord(dataDir);
  const [port, source] = process.env.EDGEMAIL_PG_PORT !== undefined
    ? [Number(process.env.EDGEMAIL_PG_PORT), 'EDGEMAIL_PG_PORT']
    : recorded
      ? [recorded.pgPort, `recorded by pnpm dev in ${stackRecordFile(dataDir)}`]
      : [DEFAULT_PG_PORT, 'the default; pnpm dev has recorded no port yet'];
  return { url: pgUrl(readCredentials(file).app, port, 'edgemail'), source: `the local stack's database on port ${port} (${source})` };
}

/** Flag first, then SERVICE_DATABASE_URL, then the local stack's. */
export function databaseTarget(flag?: string): DatabaseTarget {
  if (flag) return { url: flag, source: '--database-url' };
  if (process.env.SERVICE_DATABASE_URL) return { url: process.env.SERVICE_DATABASE_URL, source: 'SERVICE_DATABASE_URL' };
  return localDatabase();
}

/** Says which server was tried, from where its address came, and the likely reason. */
export function unreachable(target: DatabaseTarget, err: unknown): Error {
  const { hostname, port } = new URL(target.url);
  const where = `${hostname}:${port || 5432}`;
  const e = err as { code?: string; message?: string };
  const why = e.code === 'ECONNREFUSED'
    ? 'nothing answers there (is pnpm dev running?)'
    : e.code === '28P01'
      ? 'the server refused this install\'s password: it is another PostgreSQL, perhaps another checkout\'s stack (pass --database-url or EDGEMAIL_PG_PORT)'
      : e.message ?? String(err);
  return new Error(`cannot reach PostgreSQL at ${where}, ${target.source}: ${why}`);
}

/** Connects once to check the target answers, with a message naming it when not. */
export async function checkReachable(target: DatabaseTarget): Promise<void> {
  const client = new pg.Client({ connectionString: target.url, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
  } catch (e) {
    throw unreachable(target, e);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The commands' database: a small pool, not one `pg.Client`. The services they
 * call are the Worker's, which run independent reads at once (Promise.all); on
 * one client those overlap, which pg deprecates (a warning on every
 * `tls status`) and pg 9 refuses. A pool gives each its own connection.
 */
export async function withCliDatabase<T>(url: string, fn: (db: NodePgDatabase<typeof schema>) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: url, max: 4 });
  // An idle connection the server drops is the pool's to replace, not a crash.
  pool.on('error', () => undefined);
  try {
    return await fn(drizzle(pool, { schema }));
  } finally {
    await pool.end();
  }
}
