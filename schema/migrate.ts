// Applies the committed migrations (Node only). Idempotent: drizzle records
// what it applied in `drizzle.__drizzle_migrations` and skips it next time.
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';

export const migrationsFolder = fileURLToPath(new URL('./migrations', import.meta.url));

export async function runMigrations(connectionString: string): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    // Quiet the "already exists, skipping" notices of a repeat run.
    await client.query('SET client_min_messages = warning');
    await migrate(drizzle(client), { migrationsFolder });
  } finally {
    await client.end();
  }
}
