// Whether this isolate is in a database outage, so that it is logged once when
// it starts and once when it ends instead of once per refused request. The
// Neon driver's fetch (db/client.ts) reports each answer; the error handler
// (http/errors.ts) reports each failure.

let since: number | undefined;

/** A request failed because the database did not answer: logs only the first of an outage. */
export function databaseUnavailable(requestId: string, what: string, failure: unknown): void {
  if (since !== undefined) return;
  since = Date.now();
  console.error(`database unavailable (request ${requestId}, ${what}): answering 503 until it answers again;`, failure);
}

/** The database answered: ends an outage, if one was logged. */
export function databaseAnswered(): void {
  if (since === undefined) return;
  console.log(`database answers again after ${Math.round((Date.now() - since) / 1000)} s`);
  since = undefined;
}
