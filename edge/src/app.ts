// Builds the Hono application: middleware in order, then every declared route.
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env.js';
import { handleError, errorBody } from './http/errors.js';
import { validationError } from './http/validation.js';
import { requestContext } from './middleware/context.js';
import { authenticate, requirePlatformCredential } from './middleware/authenticate.js';
import { audit } from './middleware/audit.js';
import { byApiKeyOrAddress, byClientAddress, rateLimit, rateLimitHeaders } from './middleware/rate-limit.js';
import { apiRoutes, appRoutes } from './routes/registry.js';
import { openApiDocument, type Surface } from './openapi.js';

export function buildApp() {
  const app = new OpenAPIHono<AppEnv>({
    defaultHook: (result) => {
      if (!result.success) throw validationError(result.error, result.target);
    },
  });
  app.onError(handleError);
  app.notFound((c) => c.json(errorBody('not found'), 404));

  app.get('/health', (c) => c.json({ status: 'ok' }));
  app.get('/api/v1/openapi.json', (c) => c.json(openApiDocument(app, 'api')));

  // The API limiter is counted alongside the credential look-up: both round trips overlap.
  app.use('/api/v1/*', requestContext(), rateLimitHeaders(), authenticate({ name: 'api', bucketOf: byApiKeyOrAddress }), audit());
  app.use('/api/v1/admin/*', requirePlatformCredential());
  // Limited ahead of its handler, which arrives with the SES issue.
  app.post('/webhooks/ses', requestContext(), rateLimitHeaders(), rateLimit('ses_webhook', byClientAddress));

  for (const { route, handler } of [...apiRoutes, ...appRoutes]) {
    app.openapi(route, handler as never);
  }
  return app;
}

export type App = ReturnType<typeof buildApp>;
export type { Surface };
