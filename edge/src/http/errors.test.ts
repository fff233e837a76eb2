import { Hono } from 'hono';
import { expect, test } from 'vitest';
import { conflict, incompleteBody, invalid, notFound, rateLimited, ServiceError, tooLarge, unauthorized, unavailable, unsupportedMediaType } from '../services/errors.js';
import { NeonDbError } from '@neondatabase/serverless';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { ApiError, DATABASE_UNAVAILABLE, handleError } from './errors.js';

/** What a route answers when a service throws `error`, through the app's own error handler. */
async function answerTo(error: Error) {
  const app = new Hono();
  app.onError(handleError);
  app.get('/', () => { throw error; });
  const res = await app.request('/');
  return { status: res.status, body: await res.json(), retryAfter: res.headers.get('retry-after') };
}

test.each([
  [invalid('invalid request body: url: must be https', { url: 'must be https' }), 400, { error: 'invalid request body: url: must be https', fields: { url: 'must be https' } }],
  [invalid('domain limit reached'), 400, { error: 'domain limit reached' }],
  [unauthorized('relay node revoked'), 401, { error: 'relay node revoked' }],
  [notFound('domain not found'), 404, { error: 'domain not found' }],
  [incompleteBody('request body ended early: raw: 3 of 9 bytes arrived'), 408, { error: 'request body ended early: raw: 3 of 9 bytes arrived' }],
  [conflict('domain a.test is already registered in this project'), 409, { error: 'domain a.test is already registered in this project' }],
  [tooLarge('meta larger than 10 bytes'), 413, { error: 'meta larger than 10 bytes' }],
  [unsupportedMediaType('unsupported content-type text/plain', { 'content-type': 'must be x' }), 415, { error: 'unsupported content-type text/plain', fields: { 'content-type': 'must be x' } }],
  [rateLimited('hourly email limit reached'), 429, { error: 'hourly email limit reached' }],
  [unavailable('could not check url: timeout'), 503, { error: 'could not check url: timeout' }],
])('a service\'s %s answers %i with its message', async (error, status, body) => {
  expect(error).toBeInstanceOf(ServiceError);
  expect(await answerTo(error)).toEqual({ status, body, retryAfter: null });
});

test('an ApiError keeps its own status and headers', async () => {
  expect(await answerTo(new ApiError(429, 'rate limit exceeded', undefined, { 'Retry-After': '7' })))
    .toEqual({ status: 429, body: { error: 'rate limit exceeded' }, retryAfter: '7' });
});

// The backstops of issue 33: what the database says of a value, and of itself.
const neonError = (message: string, fields: { code?: string; sourceError?: unknown } = {}) =>
  Object.assign(new NeonDbError(message), fields);
const failedQuery = (cause: Error) => new DrizzleQueryError('select * from "api_keys" where "name" = $1', ['secret value'], cause);

test.each([
  ['22P02', 'invalid input syntax for type uuid: "x"'],
  ['22021', 'invalid byte sequence for encoding "UTF8": 0x00'],
  ['22003', 'integer out of range'],
  ['22008', 'date/time field value out of range: "2026-13-45"'],
  ['22001', 'value too long for type character varying(100)'],
])('a value the database refuses (%s) is 400 naming its message, never the SQL or its parameters', async (code, message) => {
  const answer = await answerTo(failedQuery(neonError(message, { code })));
  expect(answer).toEqual({ status: 400, body: { error: `invalid value: ${message}` }, retryAfter: null });
});

test.each([
  ['the endpoint cannot be reached', neonError('Error connecting to database: TypeError: fetch failed', { sourceError: new TypeError('fetch failed') })],
  ['Neon answers 5xx', neonError('Server error (HTTP status 502): bad gateway')],
  ['Neon throttles', neonError('Server error (HTTP status 429): too many requests')],
  ['Neon\'s proxy cannot reach the compute', neonError('Couldn\'t connect to compute node')],
  ['the server takes no connections', neonError('the database system is starting up', { code: '57P03' })],
  ['a connection failure', neonError('connection failure', { code: '08006' })],
])('the database unavailable (%s) is 503 with Retry-After', async (_what, cause) => {
  const answer = await answerTo(failedQuery(cause));
  expect(answer).toEqual({ status: 503, body: { error: DATABASE_UNAVAILABLE }, retryAfter: '5' });
});

test('other database errors stay 500 internal error', async () => {
  expect(await answerTo(failedQuery(neonError('deadlock detected', { code: '40P01' }))))
    .toEqual({ status: 500, body: { error: 'internal error' }, retryAfter: null });
});
