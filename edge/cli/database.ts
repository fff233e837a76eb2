// The operator binary talks to PostgreSQL directly (it works with the server
// down). Default: the local stack's database.
import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import * as schema from '@edgemail/schema';

export const LOCAL_DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${process.env.EDGEMAIL_PG_PORT ?? 54329}/edgemail`;

export function databaseUrl(flag?: string): string {
  return flag ?? process.env.SERVICE_DATABASE_URL ?? LOCAL_DATABASE_URL;
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
