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
import { apiRoutes, appRoutes, relayRoutes, webhookRoutes } from './routes/registry.js';
import { openApiDocument, type Surface } from './openapi.js';

export function buildApp() {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, result.target);
    },
  });
  app.onError(handleError);
  app.notFound((c) => c.json(errorBody('not found'), 404));

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

  // The relay-node channel: each route mounts its own body limit, credential and limiter.
  app.use('/relay/v1/*', requestContext(), rateLimitHeaders());

  for (const route of [...apiRoutes, ...appRoutes, ...relayRoutes, ...webhookRoutes]) route.mount(app);
  return app;
}

async function serialized(document: unknown): Promise<{ body: string; etag: string }> {
  const body = JSON.stringify(document);
  return { body, etag: `"${(await sha256Hex(body)).slice(0, 32)}"` };
}

export type App = ReturnType<typeof buildApp>;
export type { Surface };
