// The database handle: drizzle over Neon's SQL-over-HTTP. It holds no
// connection (each query is one stateless fetch), so one handle per isolate
// and connection string serves every request; building drizzle's schema map
// per request would cost more than the queries' own JavaScript.
import { neon, neonConfig } from '@neondatabase/serverless';
import { drizzle } from 'drizzle-orm/neon-http';
import * as schema from '@edgemail/schema';
import { databaseAnswered } from './outage.js';

// Every query is one fetch: an answer (a result, or a refusal of the statement) ends a logged outage.
neonConfig.fetchFunction = async (input: RequestInfo | URL, init?: RequestInit) => {
  const response = await fetch(input, init);
  if (response.ok || response.status === 400) databaseAnswered();
  return response;
};

function open(url: string) {
  return drizzle(neon(url), { schema });
}

export type Db = ReturnType<typeof open>;

const handles = new Map<string, Db>();
let bridgeInUse: string | undefined;

/**
 * @param url        PostgreSQL connection string (`database.url`)
 * @param localBridge base URL of the local bridge; unset in production, where
 *                    the driver talks to Neon itself
 */
export function connect(url: string, localBridge?: string): Db {
  // neonConfig is global to the isolate: set it when the bridge changes, not per request.
  if (localBridge && localBridge !== bridgeInUse) {
    neonConfig.fetchEndpoint = () => `${localBridge}/sql`;
    bridgeInUse = localBridge;
  }
  let db = handles.get(url);
  if (!db) {
    db = open(url);
    handles.set(url, db);
  }
  return db;
}
