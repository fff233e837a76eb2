// One error type for the HTTP layer's own refusals, and the status of each
// kind of service refusal (services/errors.ts); `onError` turns both into the
// spec's body `{"error": "<message>"}` (plus `fields` for validation failures).
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { loggableError } from '../db/errors.js';
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

/** Maps every thrown error to a JSON response; unknown errors become a generic 500. */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof ApiError) {
    return c.json(errorBody(err.message, err.fields), err.status, err.headers);
  }
  if (err instanceof ServiceError) {
    return c.json(errorBody(err.message, err.fields), STATUS_OF_KIND[err.kind]);
  }
  if (err instanceof HTTPException) {
    // Hono's own refusals: malformed JSON bodies, wrong content types.
    const message = /malformed json/i.test(err.message) ? 'malformed JSON body' : err.message || 'bad request';
    return c.json(errorBody(message), err.status as ContentfulStatusCode);
  }
  console.error('unhandled error', c.req.method, c.req.path, loggableError(err));
  return c.json(errorBody('internal error'), 500);
}
