// One declaration per tracking endpoint (`/t/*`, docs/tracking.md): the open
// pixel and the tracked-link redirect that recipients' mail clients fetch.
// No credential (the signed token in the path is the proof) and no Durable
// Object call: each client address is counted in the isolate's own window
// (`ratelimit.tracking_per_minute`), so a request costs one HMAC and no I/O
// before its answer. The OpenAPI document is `--surface tracking`.
import { createRoute, type OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import { addressBucket, FixedWindows } from '@edgemail/shared';
import { enforceLimit, limitOf, WINDOW_MS } from '../middleware/rate-limit.js';
import { ErrorSchema } from './define-route.js';
import type { AppEnv } from '../env.js';

const ERROR_TEXT = {
  404: 'Not a token this installation signed (altered, forged, truncated, or another kind\'s): nothing is recorded and nothing redirected',
  429: 'Rate limit exceeded (per client address, `ratelimit.tracking_per_minute`); `Retry-After` says when to try again',
} as const;

type Declared = Omit<RouteConfig, 'middleware'>;
type DeclaredExtensions = { 'x-rate-limit': 'tracking' };

const windows = new FixedWindows(50_000);

/** The isolate's count of the client's requests; 429 beyond the limit. */
const trackingLimit = () => createMiddleware<AppEnv>(async (c, next) => {
  const limit = limitOf(c, 'tracking');
  if (limit !== null) {
    const verdict = windows.hit(`tracking|${addressBucket(c.get('clientIp'))}`, limit, WINDOW_MS);
    enforceLimit(verdict);
  }
  await next();
});

export function defineTrackingRoute<const R extends Declared>(declared: R) {
  if (!declared.path.startsWith('/t/')) throw new Error(`${declared.path}: tracking endpoints live under /t/`);
  const route = {
    ...declared,
    'x-rate-limit': 'tracking',
    security: [],
    middleware: [trackingLimit()],
    responses: {
      ...declared.responses,
      ...Object.fromEntries(([404, 429] as const).map((s) => [s, { description: ERROR_TEXT[s], content: { 'application/json': { schema: ErrorSchema } } }])),
    },
  };
  return createRoute(route as unknown as R & DeclaredExtensions & { middleware: MiddlewareHandler<AppEnv>[] });
}

export interface MountableTrackingRoute {
  route: RouteConfig & DeclaredExtensions;
  mount(app: OpenAPIHono<AppEnv>): void;
}

export function mountableTracking<R extends RouteConfig & MountableTrackingRoute['route']>(module: { route: R; handler: RouteHandler<R, AppEnv> }): MountableTrackingRoute {
  const { route, handler } = module;
  return { route, mount: (app) => { app.openapi(route, handler); } };
}
