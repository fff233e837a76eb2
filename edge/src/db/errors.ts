// Database errors: the Postgres codes that map to a client error, and how a
// failure may be logged. drizzle wraps the driver's error, so the code may
// sit on `cause`.
import { DrizzleQueryError } from 'drizzle-orm/errors';

interface PgErrorFields { code?: unknown; message?: unknown; table?: unknown; constraint?: unknown }

const codeOf = (e: unknown): string | undefined => {
  const err = e as { code?: unknown; cause?: { code?: unknown } } | null;
  const code = err?.code ?? err?.cause?.code;
  return typeof code === 'string' ? code : undefined;
};

export const isUniqueViolation = (e: unknown) => codeOf(e) === '23505';
/** A foreign key refused the statement: a row it names went away (or never was). */
export const isForeignKeyViolation = (e: unknown) => codeOf(e) === '23503';

const isPgError = (e: unknown): e is Error & PgErrorFields => {
  const code = e instanceof Error ? (e as PgErrorFields).code : undefined;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
};

/**
 * What the log may say of an error. A failed query is named by its SQL text,
 * SQLSTATE and server message only: its parameters and the server's `detail`
 * hold addresses, emails and key hashes, and drizzle's own message and stack
 * repeat the parameters, so neither is logged. Other errors pass unchanged.
 */
export function loggableError(e: unknown): unknown {
  const query = e instanceof DrizzleQueryError ? e.query : undefined;
  const pg = e instanceof DrizzleQueryError ? e.cause : e;
  if (query === undefined && !isPgError(pg)) return e;
  const parts = [`database error${isPgError(pg) ? ` ${pg.code}` : ''}: ${pg instanceof Error ? pg.message : 'query failed'}`];
  if (isPgError(pg) && typeof pg.constraint === 'string') parts.push(`constraint ${pg.constraint}`);
  if (query !== undefined) parts.push(`query: ${query}`);
  return parts.join('; ');
}

/**
 * A statement the server refused for a value it was given (SQLSTATE class 22,
 * data exception: text that is not a valid uuid or timestamp, a NUL byte, a
 * number out of range, a string too long): the request's fault, a 400. The
 * input guard (http/input-guard.ts) refuses what it can name first; this is
 * the backstop for what only the database knows.
 */
export const isValueError = (e: unknown) => codeOf(e)?.startsWith('22') === true;

/** The server's own words for a value error, without the SQL text or parameters drizzle's message adds. */
export function valueErrorMessage(e: unknown): string {
  const pg = e instanceof DrizzleQueryError ? e.cause : e;
  return pg instanceof Error ? pg.message : 'the database refused a value';
}

/**
 * SQLSTATEs that mean the server is there but takes no work now:
 * class 08 (connection exception), 53300 too many connections,
 * 57P01-57P03 (shutting down, crash recovery, cannot connect now).
 */
const UNAVAILABLE_CODE = /^(08...|53300|57P0[123])$/;

/**
 * The database could not be reached, or answered that it takes no work now:
 * the Neon driver's fetch to its SQL-over-HTTP endpoint failed (Neon down, the
 * local bridge gone: `Error connecting to database`, with the fetch error as
 * `sourceError`), the endpoint answered 5xx or 429 (throttled) or that it
 * could not reach the compute, or the server named a connection failure. A client should retry: 503, not 500.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  const err = (e instanceof DrizzleQueryError ? e.cause : e) as (Error & { sourceError?: unknown }) | undefined;
  if (!(err instanceof Error)) return false;
  const code = codeOf(err);
  if (code !== undefined && UNAVAILABLE_CODE.test(code)) return true;
  if (err.name !== 'NeonDbError') return false;
  if (err.sourceError !== undefined || err.message.startsWith('Error connecting to database')) return true;
  if (/^Server error \(HTTP status (5\d\d|429)\)/.test(err.message)) return true;
  // Neon's proxy, answering for a compute it could not reach or wake (no SQLSTATE: no server answered).
  return code === undefined && /couldn't connect to compute node|control plane request failed|console request failed/i.test(err.message);
}
