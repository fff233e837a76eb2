// One declaration per one-click unsubscribe endpoint (`/unsubscribe/*`,
// docs/sending.md, "One-click unsubscribe"): what a recipient's mailbox
// provider POSTs to (RFC 8058) and the confirmation page a person opens. No
// credential: the signed token in the path is the proof. Counted per client
// address in `ratelimit.unsubscribe_per_minute`; its OpenAPI document is
// `--surface unsubscribe`.
import { createRoute, type OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { addressBucketOf, rateLimit } from '../middleware/rate-limit.js';
import { ErrorSchema } from './define-route.js';
import { guardInput, inputOf } from './input-guard.js';
import type { AppEnv } from '../env.js';

const ERROR_TEXT = {
  400: 'Malformed request: a POST without the body `List-Unsubscribe=One-Click` (RFC 8058), or a parameter that fails validation',
  404: 'Not a token this installation signed (forged, altered, truncated, or of a message that carried no unsubscribe link): nothing changed',
  410: 'A token of ours past `sending.unsubscribe_link_ttl`: nothing changed',
  413: 'Request body larger than `server.max_body_bytes`',
  415: 'A POST body that is not `application/x-www-form-urlencoded` or `multipart/form-data`',
  429: 'Rate limit exceeded (per client address, `ratelimit.unsubscribe_per_minute`); `Retry-After` says when to try again',
} as const;

type Declared = Omit<RouteConfig, 'middleware'>;
type DeclaredExtensions = { 'x-rate-limit': 'unsubscribe' };

export function defineUnsubscribeRoute<const R extends Declared>(declared: R) {
  if (!declared.path.startsWith('/unsubscribe/')) throw new Error(`${declared.path}: unsubscribe endpoints live under /unsubscribe/`);
  const route = {
    ...declared,
    'x-rate-limit': 'unsubscribe',
    security: [],
    middleware: [rateLimit('unsubscribe', addressBucketOf), guardInput(inputOf(declared))],
    responses: {
      ...declared.responses,
      ...Object.fromEntries(([400, 404, 410, 413, 415, 429] as const).map((s) => [s, { description: ERROR_TEXT[s], content: { 'application/json': { schema: ErrorSchema } } }])),
    },
  };
  return createRoute(route as unknown as R & DeclaredExtensions & { middleware: MiddlewareHandler<AppEnv>[] });
}

export interface MountableUnsubscribeRoute {
  route: RouteConfig & DeclaredExtensions;
  mount(app: OpenAPIHono<AppEnv>): void;
}

export function mountableUnsubscribe<R extends RouteConfig & MountableUnsubscribeRoute['route']>(module: { route: R; handler: RouteHandler<R, AppEnv> }): MountableUnsubscribeRoute {
  const { route, handler } = module;
  return { route, mount: (app) => { app.openapi(route, handler); } };
}
