// One error type for the HTTP layer's own refusals, and the status of each
// kind of service refusal (services/errors.ts); `onError` turns both into the
// spec's body `{"error": "<message>"}` (plus `fields` for validation failures).
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { isDatabaseUnavailable, isValueError, loggableError, valueErrorMessage } from '../db/errors.js';
import { databaseUnavailable } from '../db/outage.js';
import { ServiceError, type ServiceErrorKind } from '../services/errors.js';

export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    message: string,
    readonly fields?: Record<string, string>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, fields?: Record<string, string>) => new ApiError(400, message, fields);
export const unauthorized = (message: string) => new ApiError(401, message);
export const forbidden = (message: string) => new ApiError(403, message);
export const notFound = (message: string) => new ApiError(404, message);

/** 415 saying what the route takes: `unsupported content-type text/plain: the body must be application/json`. */
export function unsupportedContentType(sent: string | undefined, declared: string[]): ApiError {
  const expected = declared.length ? declared.join(' or ') : 'of a type the route declares';
  return new ApiError(415, `unsupported content-type ${sent?.split(';')[0]!.trim() || '(none)'}: the body must be ${expected}`, { 'content-type': `must be ${expected}` });
}

/** The status each kind of service refusal answers with. */
const STATUS_OF_KIND = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  incomplete_body: 408,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  unprocessable: 422,
  rate_limited: 429,
  unavailable: 503,
} as const satisfies Record<ServiceErrorKind, ContentfulStatusCode>;

export function errorBody(error: string, fields?: Record<string, string>) {
  return fields ? { error, fields } : { error };
}

export const DATABASE_UNAVAILABLE = 'service temporarily unavailable: the database did not answer; retry later';
/** Seconds a client is told to wait when the database did not answer. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** What names a request in the log and to its client: Cloudflare's ray id, else one of our own. */
const requestIdOf = (c: Context) => c.req.header('cf-ray') ?? crypto.randomUUID();

/** Maps every thrown error to a JSON response; unknown errors become a generic 500. */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof ApiError) {
    return c.json(errorBody(err.message, err.fields), err.status, err.headers);
  }
  if (err instanceof ServiceError) {
    return c.json(errorBody(err.message, err.fields), STATUS_OF_KIND[err.kind]);
  }
  if (err instanceof HTTPException) {
    // Hono's own refusals: malformed JSON bodies, wrong content types (the input guard answers those
    // of declared routes first, naming the type; this is the fallback's wording).
    if (err.status === 415) {
      const { message, fields } = unsupportedContentType(c.req.header('content-type'), []);
      return c.json(errorBody(message, fields), 415);
    }
    const message = /malformed json/i.test(err.message) ? 'malformed JSON body' : err.message || 'bad request';
    return c.json(errorBody(message), err.status as ContentfulStatusCode);
  }
  const requestId = requestIdOf(c);
  const what = `${c.req.method} ${c.req.path}`;
  if (isDatabaseUnavailable(err)) {
    // Logged once per outage (db/outage.ts): every request of it fails alike.
    databaseUnavailable(requestId, what, loggableError(err));
    return c.json(errorBody(DATABASE_UNAVAILABLE), 503, { 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS), 'X-Request-Id': requestId });
  }
  if (isValueError(err)) {
    // A value the input guard could not judge (http/input-guard.ts): the server's message names it, never the SQL.
    console.warn(`request ${requestId} (${what}): value refused by the database:`, loggableError(err));
    return c.json(errorBody(`invalid value: ${valueErrorMessage(err)}`), 400, { 'X-Request-Id': requestId });
  }
  console.error(`unhandled error (request ${requestId})`, what, loggableError(err));
  return c.json(errorBody('internal error'), 500, { 'X-Request-Id': requestId });
}
