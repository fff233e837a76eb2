// One declaration per relay-node route (docs/relay-protocol.md): method, path,
// schemas, the credential it takes, its limiter and its body limit. The
// middleware, the OpenAPI document (`--surface relay`) and docs/routes.md are
// derived from it, as `defineRoute` does for /api/v1.
import { createRoute, type OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import { contractRefusal, readContractHeader, RELAY_CONTRACT_HEADER, RELAY_CONTRACT_REFUSED_STATUS, type Config } from '@edgemail/shared';
import type { Context, MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import { audit } from '../middleware/audit.js';
import { authenticate } from '../middleware/authenticate.js';
import { limitBodyBy } from '../middleware/body-limit.js';
import { authenticateNode, requireEnrollingKey, type RelayLimiter } from '../middleware/relay-node.js';
import { ErrorSchema, type ProjectEnv } from './define-route.js';
import { ApiError } from './errors.js';
import { guardInput, inputOf } from './input-guard.js';
import type { AppEnv } from '../env.js';

/** `node`: a `myr_` node credential; `enrolment`: a project key holding relay:write. */
export type RelayCredential = 'node' | 'enrolment';

/** Chatter routes take small JSON bodies. */
export const CHATTER_BODY_BYTES = 64 * 1024;

const ERROR_TEXT = {
  400: 'Malformed request: invalid JSON or a field that fails validation (named in `fields`); permanent',
  401: 'Missing, malformed or unknown credential, or a revoked node (`relay node revoked`)',
  403: 'Enrolment with something other than a project key holding relay:write, or a node that is not installation-wide asking for the shared certificate or ACME',
  404: 'Not found',
  408: 'The request body ended before the length it announced; retried',
  409: 'The request conflicts with the edge\'s settings or state (named in the message), e.g. an ACME host the edge\'s `acme.hosts` does not name; the same request is refused again until that changes',
  411: 'A streamed body without Content-Length',
  413: 'Request body larger than the route\'s limit',
  415: 'A body of another content type (a relay node older than the edge); retried',
  426: 'The node\'s relay contract (`Edgemail-Relay-Contract`) is not one this edge serves: the message names the served range and which side to upgrade (docs/relay-protocol.md, "Versions"); the node keeps its mail and waits',
  429: 'Rate limit exceeded; `Retry-After` says when to try again',
} as const;
type RelayErrorStatus = keyof typeof ERROR_TEXT;

type Declared = Omit<RouteConfig, 'middleware'> & {
  credential: RelayCredential;
  /** The limiter a node's calls count in (enrolment counts in the key's `api` window). */
  limiter?: RelayLimiter;
  /** How many hits of the limiter a call is (a batch: its messages); one by default. */
  limiterCount?: (c: Context<AppEnv>) => number;
  /** Largest body in bytes, from the settings. */
  bodyLimit: (config: Config) => number;
  /**
   * The handler streams the body on (inbound forwarding): it must come with
   * Content-Length, checked against `bodyLimit` before anything is read (a
   * body without one would be buffered whole to be counted).
   */
  streamsBody?: boolean;
  /**
   * Body fields (dotted, `*` for any array index) that carry the outside
   * world's text, relayed as received (a remote server's reply): the contract
   * cleans them (storedText), so the input guard lets their NUL and lone
   * surrogates through instead of refusing a whole report for one hostile server.
   */
  remoteText?: string[];
  errors?: RelayErrorStatus[];
  auditType?: string;
};

type DeclaredExtensions = { 'x-relay-credential': RelayCredential; 'x-rate-limit': string; 'x-permission'?: 'relay:write'; 'x-audit-type'?: string };

export function defineRelayRoute<const R extends Declared>(declared: R) {
  const { credential, limiter, limiterCount, bodyLimit, streamsBody, remoteText = [], errors = [], auditType, ...config } = declared;
  if (!config.path.startsWith('/relay/v1/')) throw new Error(`${config.path}: relay routes live under /relay/v1/`);
  if ((credential === 'node') !== (limiter !== undefined)) throw new Error(`${config.path}: a node route names its limiter, enrolment none`);
  const middleware: MiddlewareHandler<AppEnv>[] = [requireServedContract, ...(streamsBody ? [requireContentLength] : []), limitBodyBy(bodyLimit)];
  if (credential === 'node') {
    middleware.push(authenticateNode(limiter!, limiterCount));
  } else {
    middleware.push(
      authenticate('api'),
      createMiddleware<AppEnv>(async (c, next) => { c.set('auditType', auditType); await next(); }),
      audit(),
      requireEnrollingKey(),
    );
  }
  middleware.push(guardInput(inputOf(config), remoteText));
  const statuses: RelayErrorStatus[] = [400, 401, 413, 426, 429, ...(credential === 'enrolment' ? [403 as const] : []), ...errors];
  const route = {
    ...config,
    'x-relay-credential': credential,
    'x-rate-limit': limiter ?? 'api',
    ...(credential === 'enrolment' ? { 'x-permission': 'relay:write' } : {}),
    ...(auditType ? { 'x-audit-type': auditType } : {}),
    security: [{ [credential === 'node' ? 'relayNodeCredential' : 'bearerAuth']: [] }],
    middleware,
    responses: {
      ...config.responses,
      ...Object.fromEntries(statuses.map((s) => [s, { description: ERROR_TEXT[s], content: { 'application/json': { schema: ErrorSchema } } }])),
    },
  };
  // `x-relay-credential` keeps its literal type: RelayRouteEnv reads it.
  return createRoute(route as unknown as Omit<R, 'credential' | 'limiter' | 'limiterCount' | 'bodyLimit' | 'streamsBody' | 'errors' | 'auditType'> & DeclaredExtensions & { 'x-relay-credential': R['credential']; middleware: MiddlewareHandler<AppEnv>[] });
}

/**
 * The node names its relay contract in every request; one this edge does not
 * serve is refused before anything else (426 names the served range and the
 * side to upgrade), so no route reads a body it may misunderstand. No header
 * is contract 1 (nodes older than it).
 */
const requireServedContract = createMiddleware<AppEnv>(async (c, next) => {
  const read = readContractHeader(c.req.header(RELAY_CONTRACT_HEADER));
  if (!read.ok) throw new ApiError(400, read.error, { [RELAY_CONTRACT_HEADER]: read.error.slice(RELAY_CONTRACT_HEADER.length + 1) });
  const refusal = contractRefusal(read.version);
  if (refusal) throw new ApiError(RELAY_CONTRACT_REFUSED_STATUS, refusal);
  await next();
});

/** 411 for a body without Content-Length (or sent chunked), before the body limit would buffer it to count it. */
const requireContentLength = createMiddleware<AppEnv>(async (c, next) => {
  const headers = c.req.raw.headers;
  if (!headers.has('content-length') || headers.has('transfer-encoding')) {
    throw new ApiError(411, 'content-length required: the body is streamed to storage and its length must be known');
  }
  await next();
});

export interface MountableRelayRoute {
  route: RouteConfig & DeclaredExtensions;
  mount(app: OpenAPIHono<AppEnv>): void;
}

/**
 * The env a relay route's handler must take: enrolment has passed `authorize`
 * (requireEnrollingKey), so `c.get('projectId')` is the enrolling key's project.
 */
export type RelayRouteEnv<R> = R extends { 'x-relay-credential': 'enrolment' } ? ProjectEnv : AppEnv;

/** @example export const relayRoutes = [mountableRelay(enroll), mountableRelay(heartbeat)]; */
export function mountableRelay<R extends RouteConfig & MountableRelayRoute['route']>(module: { route: R; handler: RouteHandler<R, RelayRouteEnv<R>> }): MountableRelayRoute {
  const { route, handler } = module;
  // The route's middleware has set what RelayRouteEnv<R> promises before the handler runs.
  return { route, mount: (app) => { app.openapi(route, handler as RouteHandler<R, AppEnv>); } };
}
