// One declaration per route: method, path, schemas, the permission it needs
// and the errors it may answer. The permission check, the OpenAPI document and
// the audit type are all derived from it.
import { createRoute, z, type OpenAPIHono, type RouteConfig, type RouteHandler } from '@hono/zod-openapi';
import type { Config, Permission, Role } from '@edgemail/shared';
import type { MiddlewareHandler } from 'hono';
import { createMiddleware } from 'hono/factory';
import { authorize, type ProjectlessAccess, type RouteAccess } from '../middleware/authorize.js';
import { authenticate } from '../middleware/authenticate.js';
import { declareRouteBodyLimit } from '../middleware/body-limit.js';
import { auditType } from './audit-type.js';
import { guardInput, inputOf } from './input-guard.js';
import type { AppEnv } from '../env.js';

/** What a project-scoped route's handler sees: `authorize` has set the project the request acts in. */
export type ProjectEnv = { Bindings: AppEnv['Bindings']; Variables: Omit<AppEnv['Variables'], 'projectId'> & { projectId: string } };

/**
 * The env a declared route's handler must take: ProjectEnv unless its access
 * needs no project, so `c.get('projectId')` is a string where one is certain.
 * @example export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => c.json(await listDomains(c.get('db'), c.get('projectId')), 200);
 */
export type RouteEnv<R> = R extends { 'x-permission': ProjectlessAccess } ? AppEnv : ProjectEnv;

export const ErrorSchema = z
  .object({
    error: z.string().openapi({ example: 'permission apikeys:write required' }),
    fields: z.record(z.string(), z.string()).optional().openapi({ description: 'Field name → problem, on validation failures' }),
  })
  .openapi('Error');

const ERROR_TEXT = {
  400: 'Malformed request: invalid JSON, a body that is not UTF-8, a required body not sent, a field or parameter that fails validation or holds a NUL or an unpaired surrogate (named in `fields`), a value the database cannot store (`invalid value: …`) or a missing project header',
  401: 'Missing, malformed, unknown, expired or revoked credential',
  403: 'Credential not allowed here: missing permission or role, foreign project, address outside allowed_ips, or cross-origin cookie request',
  404: 'Not found in this project',
  409: 'Conflicts with the current state',
  413: 'Request body larger than `server.max_body_bytes`',
  422: 'Well-formed, but cannot be done with what is stored: a template that does not render with the data (a missing variable, named) or crosses a render bound (nesting, steps or output bytes, naming its `templates.*` setting), no active version, no localization',
  429: 'Rate limit exceeded',
  503: 'A service the route depends on did not answer (such as the DNS resolver checking a webhook URL), or the database did not (every route: `service temporarily unavailable: …`, with `Retry-After`); retry later',
} as const;
export type ErrorStatus = keyof typeof ERROR_TEXT;

const errorResponse = (status: ErrorStatus) => ({
  description: ERROR_TEXT[status],
  content: { 'application/json': { schema: ErrorSchema } },
});

type Declared = Omit<RouteConfig, 'middleware'> & {
  permission: RouteAccess;
  /** Minimum membership role for a browser session (keys are judged on `permission` alone). */
  role?: Role;
  /** Error statuses beyond 400/401/403 this route can answer. */
  errors?: ErrorStatus[];
  /** Overrides the audit type derived from method and path; null: the middleware records nothing (the route records its own events). */
  auditType?: string | null;
  /** Other permissions that pass the check as well as `permission` does. */
  alsoGrantedBy?: Permission[];
  /** What a sandbox key is judged on instead of `permission` (the send routes: `sandbox:write`). */
  sandboxPermission?: Permission;
  /**
   * The route's own body limit instead of `server.max_body_bytes` (413 beyond
   * it), and how the 413 response describes it.
   */
  bodyLimit?: { maxOf: (config: Config) => number; description: string };
  /**
   * Ignored: the OpenAPI document tags each operation by its resource and names
   * it `<resource>_<method>` from the path (http/operation-names.ts). Left
   * optional until the route files stop setting it.
   */
  tags?: string[];
};

/** What the declaration adds to the OpenAPI operation, read by the docs and the registry. */
type DeclaredExtensions = {
  'x-permission': RouteAccess;
  'x-role'?: Role;
  'x-audit-type'?: string;
  'x-also-granted-by'?: Permission[];
  'x-sandbox-permission'?: Permission;
};

export function defineRoute<const R extends Declared>(declared: R) {
  const { permission, role, errors = [], auditType: declaredType, alsoGrantedBy, sandboxPermission, bodyLimit, tags: _ignored, ...config } = declared;
  // The admin gate is the path's (`requirePlatformCredential` on /api/v1/admin/*): the two must agree.
  if ((permission === 'platform:admin') !== config.path.startsWith('/api/v1/admin/')) {
    throw new Error(`${config.method.toUpperCase()} ${config.path}: platform:admin is the permission of exactly the /api/v1/admin/ routes`);
  }
  // The console surface (`/app/api`) authenticates per route: its `public` routes (sign-in) take no credential.
  const onConsole = config.path.startsWith('/app/api/');
  if ((permission === 'public' || permission === 'session') && !onConsole) {
    throw new Error(`${config.method.toUpperCase()} ${config.path}: ${permission} routes belong to /app/api`);
  }
  // 503: every route reads the database, and answers so while it does not answer (http/errors.ts).
  const statuses: ErrorStatus[] = [400, 401, 403, 429, ...(config.request?.body ? [413 as const] : []), 503, ...errors];
  const type = declaredType === null ? undefined : declaredType ?? auditType(config.method, config.path) ?? undefined;
  // The global limiter (`limitBody` on /api/v1/*) runs before routing: it looks the route's own limit up.
  if (bodyLimit) declareRouteBodyLimit(config.method, config.path, bodyLimit.maxOf);
  const route = {
    ...config,
    'x-permission': permission,
    ...(role ? { 'x-role': role } : {}),
    ...(type ? { 'x-audit-type': type } : {}),
    ...(alsoGrantedBy?.length ? { 'x-also-granted-by': alsoGrantedBy } : {}),
    ...(sandboxPermission ? { 'x-sandbox-permission': sandboxPermission } : {}),
    middleware: [
      createMiddleware<AppEnv>(async (c, next) => { c.set('auditType', type); await next(); }),
      ...(onConsole && permission !== 'public' ? [authenticate()] : []),
      authorize(permission, role, { alsoGrantedBy, sandboxPermission }),
      guardInput(inputOf(config)),
    ],
    responses: {
      // A route may describe one of the error statuses itself (sign-in's 401 says more than `error`).
      ...Object.fromEntries(statuses.map((s) => [s, errorResponse(s)])),
      ...config.responses,
      ...(bodyLimit ? { 413: { ...errorResponse(413), description: bodyLimit.description } } : {}),
    },
  };
  // createRoute keeps the literal type it is given; the declaration's own keys are swapped for
  // their `x-` forms, which zod-openapi's RouteConfig cannot name, hence the one cast.
  // `x-permission` keeps its literal type: RouteEnv reads it.
  return createRoute(route as unknown as Omit<R, 'permission' | 'role' | 'errors' | 'auditType' | 'alsoGrantedBy' | 'sandboxPermission' | 'bodyLimit' | 'tags'> & DeclaredExtensions & { 'x-permission': R['permission']; middleware: MiddlewareHandler<AppEnv>[] });
}

/** A declared route with its handler, ready to mount; what the registry lists. */
export interface MountableRoute {
  route: RouteConfig & DeclaredExtensions;
  mount(app: OpenAPIHono<AppEnv>): void;
}

/**
 * Pairs a route module's declaration with its handler, type-checked together.
 * @example export const apiRoutes = [mountable(createApiKey), mountable(listApiKeys)];
 */
export function mountable<R extends RouteConfig & MountableRoute['route']>(module: { route: R; handler: RouteHandler<R, RouteEnv<R>> }): MountableRoute {
  const { route, handler } = module;
  // authorize, in the route's middleware, has set what RouteEnv<R> promises before the handler runs.
  return { route, mount: (app) => { app.openapi(route, handler as RouteHandler<R, AppEnv>); } };
}
