// Request bodies are bounded before anything parses them: by Content-Length
// when sent, else by counting the stream as it is read.
import type { MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { createMiddleware } from 'hono/factory';
import { ApiError } from '../http/errors.js';
import type { Config } from '@edgemail/shared';
import type { AppEnv } from '../env.js';

const byMaxSize = new Map<number, MiddlewareHandler>();

function limiterOf(maxSize: number): MiddlewareHandler {
  let limiter = byMaxSize.get(maxSize);
  if (!limiter) {
    limiter = bodyLimit({
      maxSize,
      onError: () => { throw new ApiError(413, `request body larger than ${maxSize} bytes`); },
    });
    byMaxSize.set(maxSize, limiter);
  }
  return limiter;
}

/** A route of the limited surface that declared a limit of its own (`bodyLimit` in defineRoute). */
interface RouteBodyLimit { method: string; path: RegExp; maxOf: (config: Config) => number }
const routeLimits: RouteBodyLimit[] = [];

/**
 * Gives one route under `limitBody` its own limit instead of
 * `server.max_body_bytes`; defineRoute calls it for a declared `bodyLimit`
 * (the send routes, whose attachments are larger than any other body).
 * `path` is the declared OpenAPI path; `{param}` matches one segment.
 */
export function declareRouteBodyLimit(method: string, path: string, maxOf: (config: Config) => number): void {
  const pattern = path.split(/\{[^}]+\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/]+');
  routeLimits.push({ method: method.toUpperCase(), path: new RegExp(`^${pattern}$`), maxOf });
}

/**
 * Refuses a body above `server.max_body_bytes` with 413, or above the
 * route's own declared limit (`declareRouteBodyLimit`). Routes that take
 * larger bodies outside the API (inbound forwarding) are mounted outside it
 * with their own.
 */
export const limitBody = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    const config = c.get('config');
    const own = routeLimits.length ? routeLimits.find((r) => r.method === c.req.method && r.path.test(c.req.path)) : undefined;
    return limiterOf(own ? own.maxOf(config) : config['server.max_body_bytes'])(c, next);
  });

/**
 * A route's own limit, read from the settings: the relay routes mount this
 * instead (64 KiB of chatter, or a whole message on inbound forwarding).
 * @example limitBodyBy((config) => 2 * config['inbound.max_message_size'] + 1_048_576)
 */
export const limitBodyBy = (maxOf: (config: Config) => number) =>
  createMiddleware<AppEnv>(async (c, next) => limiterOf(maxOf(c.get('config')))(c, next));
