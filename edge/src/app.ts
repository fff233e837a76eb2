// Builds the Hono application: middleware in order, then every declared route.
import { OpenAPIHono } from '@hono/zod-openapi';
import { sha256Hex } from '@edgemail/shared';
import type { AppEnv } from './env.js';
import { handleError, errorBody } from './http/errors.js';
import { validationError } from './http/validation.js';
import { requestContext } from './middleware/context.js';
import { authenticate, requirePlatformCredential } from './middleware/authenticate.js';
import { audit } from './middleware/audit.js';
import { consoleGuard } from './middleware/console-guard.js';
import { limitBody } from './middleware/body-limit.js';
import { requireUsableConfig } from './middleware/config-guard.js';
import { rateLimitHeaders } from './middleware/rate-limit.js';
import { apiRoutes, appRoutes, relayRoutes, trackingRoutes, webhookRoutes } from './routes/registry.js';
import { openApiDocument, type Surface } from './openapi.js';
import { unsubscribeRoutes } from './routes/registry.js';

export function buildApp() {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, result.target);
    },
  });
  app.onError(handleError);
  // A path a route declares, asked with a method none declares for it, is 405 naming the ones that are.
  let methodsOf: ((path: string) => string[]) | undefined;
  app.notFound((c) => {
    const allowed = (methodsOf ??= declaredMethods(app))(c.req.path);
    if (!allowed.length || allowed.includes(c.req.method)) return c.json(errorBody('not found'), 404);
    const list = allowed.join(', ');
    return c.json(errorBody(`method ${c.req.method} not allowed on ${c.req.path}: allowed ${list}`), 405, { Allow: list });
  });

  // Nothing is served on an unusable configuration (a bad setting, no encryption key).
  app.use('*', requireUsableConfig());
  app.get('/health', (c) => c.json({ status: 'ok' }));
  // Built once per isolate (the routes do not change while it lives), with an
  // ETag so clients that poll it can revalidate for nothing.
  let apiDocument: Promise<{ body: string; etag: string }> | undefined;
  app.get('/api/v1/openapi.json', async (c) => {
    const { body, etag } = await (apiDocument ??= serialized(openApiDocument(app, 'api')));
    if (c.req.header('if-none-match') === etag) return c.body(null, 304, { ETag: etag });
    return c.body(body, 200, { 'Content-Type': 'application/json', ETag: etag });
  });

  // The API limiter is counted inside authentication, alongside the credential look-up.
  app.use('/api/v1/*', requestContext(), limitBody(), rateLimitHeaders(), authenticate('api'), audit());
  app.use('/api/v1/admin/*', requirePlatformCredential());
  // The console (docs/console.md): sessions only; each route authenticates itself (define-route.ts),
  // as sign-in takes no credential.
  app.use('/app/api/*', requestContext(), limitBody(), rateLimitHeaders(), consoleGuard(), audit());
  // Provider webhooks: each route mounts its own per-address limiter (define-webhook-route.ts).
  app.use('/webhooks/*', requestContext(), limitBody(), rateLimitHeaders());
  // One-click unsubscribe: each route mounts its own per-address limiter (define-unsubscribe-route.ts).
  app.use('/unsubscribe/*', requestContext(), limitBody(), rateLimitHeaders());

  // The relay-node channel: each route mounts its own body limit, credential and limiter.
  app.use('/relay/v1/*', requestContext(), rateLimitHeaders());

  // Open and click tracking: public and cheap; each route counts its client in the isolate (define-tracking-route.ts).
  app.use('/t/*', requestContext());

  for (const route of [...apiRoutes, ...appRoutes, ...relayRoutes, ...webhookRoutes, ...trackingRoutes]) route.mount(app);
  for (const route of unsubscribeRoutes) route.mount(app);
  return app;
}

/**
 * The methods mounted on each path (every declared route, `/health`, the OpenAPI document),
 * read from the router's own table once every route is mounted; middleware (`ALL`) is no route.
 * HEAD is not listed: Hono answers it wherever GET is.
 */
function declaredMethods(app: OpenAPIHono<AppEnv>): (path: string) => string[] {
  const patterns = new Map<string, { pattern: RegExp; methods: Set<string> }>();
  for (const { method, path } of app.routes) {
    if (method === 'ALL' || path.includes('*')) continue;
    const source = path.split('/').map((segment) => (segment.startsWith(':') ? '[^/]+' : segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))).join('/');
    const entry = patterns.get(source) ?? { pattern: new RegExp(`^${source}$`), methods: new Set<string>() };
    entry.methods.add(method.toUpperCase());
    patterns.set(source, entry);
  }
  return (path) => {
    const methods = new Set<string>();
    for (const { pattern, methods: own } of patterns.values()) if (pattern.test(path)) own.forEach((m) => methods.add(m));
    return [...methods].sort();
  };
}

async function serialized(document: unknown): Promise<{ body: string; etag: string }> {
  const body = JSON.stringify(document);
  return { body, etag: `"${(await sha256Hex(body)).slice(0, 32)}"` };
}

export type App = ReturnType<typeof buildApp>;
export type { Surface };
