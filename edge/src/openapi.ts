// The OpenAPI 3.1 document, generated from the route declarations.
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from './env.js';

export type Surface = 'api' | 'app';

const PREFIX: Record<Surface, string> = { api: '/api/v1', app: '/app/api' };

export function openApiDocument(app: OpenAPIHono<AppEnv>, surface: Surface) {
  const doc = app.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: surface === 'api' ? 'edgemail machine API' : 'edgemail console API',
      version: '1.0.0',
      description: 'Each operation names the permission it needs in `x-permission`.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }, { sessionCookie: [] }],
  });
  doc.paths = Object.fromEntries(Object.entries(doc.paths ?? {}).filter(([path]) => path.startsWith(PREFIX[surface])));
  doc.components = {
    ...doc.components,
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: '`myk_` project key, or `mya_` platform credential on /api/v1/admin' },
      sessionCookie: { type: 'apiKey', in: 'cookie', name: 'edgemail_session' },
    },
  };
  return doc;
}
