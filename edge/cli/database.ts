// The operator binary talks to PostgreSQL directly (it works with the server
// down). Default: the local stack's database, as its application role, with
// the password `pnpm dev` generated for this install.
import { existsSync } from 'node:fs';
import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import * as schema from '@edgemail/schema';
import { credentialsFile, localDataDir, pgUrl, readCredentials } from '../local/pg-credentials.js';

/** The local stack's database (`EDGEMAIL_DATA_DIR`, `EDGEMAIL_PG_PORT` as `pnpm dev` reads them). */
export function localDatabaseUrl(): string {
  const file = credentialsFile(`${localDataDir()}/pg`);
  if (!existsSync(file)) {
    throw new Error(`no local database credentials in ${file}: start the local stack once (pnpm dev), or pass --database-url`);
  }
  return pgUrl(readCredentials(file).app, Number(process.env.EDGEMAIL_PG_PORT ?? 54329), 'edgemail');
}

export function databaseUrl(flag?: string): string {
  return flag ?? process.env.SERVICE_DATABASE_URL ?? localDatabaseUrl();
}

export async function withDatabase<T>(url: string, fn: (db: NodePgDatabase<typeof schema>) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(drizzle(client, { schema }));
  } finally {
    await client.end();
  }
}
