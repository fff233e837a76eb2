// The database handle of one request: drizzle over Neon's SQL-over-HTTP.
// One-shot queries and non-interactive batches need no connection set-up.
import { neon, neonConfig } from '@neondatabase/serverless';
import { drizzle } from 'drizzle-orm/neon-http';
import * as schema from '@edgemail/schema';

export type Db = ReturnType<typeof connect>;

/**
 * @param url        PostgreSQL connection string (`database.url`)
 * @param localBridge base URL of the local bridge; unset in production, where
 *                    the driver talks to Neon itself
 */
export function connect(url: string, localBridge?: string) {
  if (localBridge) {
    neonConfig.fetchEndpoint = () => `${localBridge}/sql`;
  }
  return drizzle(neon(url), { schema });
}
