import { Hono } from 'hono';
import { expect, test } from 'vitest';
import { conflict, incompleteBody, invalid, notFound, rateLimited, ServiceError, tooLarge, unauthorized, unavailable, unsupportedMediaType } from '../services/errors.js';
import { ApiError, handleError } from './errors.js';

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
