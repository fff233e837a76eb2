// One declaration per provider webhook (`/webhooks/*`, docs/ses.md): routes a
// provider calls without a credential of ours (the message carries its own
// proof, checked by the service). The declaration names the limiter that
// counts each client address; its OpenAPI document is `--surface webhooks`.
import { createRoute, type OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { addressBucketOf, rateLimit, type LimiterName } from '../middleware/rate-limit.js';
import { ErrorSchema } from './define-route.js';
import { guardInput, inputOf } from './input-guard.js';
import type { AppEnv } from '../env.js';

const ERROR_TEXT = {
  400: 'Malformed request: invalid JSON, a field that fails validation (named in `fields`), or a message the route does not take (named)',
  401: 'The message\'s signature does not verify',
  403: 'The message is signed but not from a sender this installation accepts',
  413: 'Request body larger than `server.max_body_bytes`',
  429: 'Rate limit exceeded (per client address); `Retry-After` says when to try again',
  503: 'A service the route depends on did not answer (fetching a signing certificate, confirming a subscription); retried by the sender',
} as const;
type WebhookErrorStatus = keyof typeof ERROR_TEXT;

type Declared = Omit<RouteConfig, 'middleware'> & {
  /** The limiter counting each client address. */
  limiter: LimiterName;
  errors?: WebhookErrorStatus[];
};

type DeclaredExtensions = { 'x-rate-limit': LimiterName };

export function defineWebhookRoute<const R extends Declared>(declared: R) {
  const { limiter, errors = [], ...config } = declared;
  if (!config.path.startsWith('/webhooks/')) throw new Error(`${config.path}: provider webhooks live under /webhooks/`);
  const statuses: WebhookErrorStatus[] = [400, 413, 429, ...errors];
  const route = {
    ...config,
    'x-rate-limit': limiter,
    security: [],
    middleware: [rateLimit(limiter, addressBucketOf), guardInput(inputOf(config))],
    responses: {
      ...config.responses,
      ...Object.fromEntries(statuses.map((s) => [s, { description: ERROR_TEXT[s], content: { 'application/json': { schema: ErrorSchema } } }])),
    },
  };
  return createRoute(route as unknown as Omit<R, 'limiter' | 'errors'> & DeclaredExtensions & { middleware: MiddlewareHandler<AppEnv>[] });
}

export interface MountableWebhookRoute {
  route: RouteConfig & DeclaredExtensions;
  mount(app: OpenAPIHono<AppEnv>): void;
}

/** @example export const webhookRoutes = [mountableWebhook(receiveSes)]; */
export function mountableWebhook<R extends RouteConfig & MountableWebhookRoute['route']>(module: { route: R; handler: RouteHandler<R, AppEnv> }): MountableWebhookRoute {
  const { route, handler } = module;
  return { route, mount: (app) => { app.openapi(route, handler); } };
}
