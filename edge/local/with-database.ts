// One short-lived node-postgres connection with the drizzle schema, for work
// done straight in the database from Node: the local stack's relay-node
// enrolment, the operator binary's commands (edge/cli) and the benchmarks.
import pg from 'pg';
import { drizzle, type NodePgDatabase } from 'drizzle-orm/node-postgres';
import * as schema from '@edgemail/schema';

export async function withDatabase<T>(url: string, fn: (db: NodePgDatabase<typeof schema>) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(drizzle(client, { schema }));
  } finally {
    await client.end();
  }
}
