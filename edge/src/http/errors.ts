// One error type for every refusal; `onError` turns it into the spec's body
// `{"error": "<message>"}` (plus `fields` for validation failures).
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { loggableError } from '../db/errors.js';

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
export const conflict = (message: string) => new ApiError(409, message);

export function errorBody(error: string, fields?: Record<string, string>) {
  return fields ? { error, fields } : { error };
}

/** Maps every thrown error to a JSON response; unknown errors become a generic 500. */
export function handleError(err: Error, c: Context): Response {
  if (err instanceof ApiError) {
    return c.json(errorBody(err.message, err.fields), err.status, err.headers);
  }
  if (err instanceof HTTPException) {
    // Hono's own refusals: malformed JSON bodies, wrong content types.
    const message = /malformed json/i.test(err.message) ? 'malformed JSON body' : err.message || 'bad request';
    return c.json(errorBody(message), err.status as ContentfulStatusCode);
  }
  console.error('unhandled error', c.req.method, c.req.path, loggableError(err));
  return c.json(errorBody('internal error'), 500);
}
