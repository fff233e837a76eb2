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
