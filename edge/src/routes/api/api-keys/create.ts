import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { ApiKeySchema, CreateApiKeySchema } from '../../../contracts/api-key.js';
import { createApiKey } from '../../../services/api-keys/create.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/api-keys',
  permission: 'apikeys:write',
  summary: 'Create an API key',
  description: 'The token is returned in this response only; the service keeps its SHA-256 hash. As a session, the key is created in the project of `X-Service-Project-Id` (or the default project).',
  tags: ['API keys'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateApiKeySchema } } } },
  responses: {
    201: {
      description: 'Key created',
      content: { 'application/json': { schema: z.object({ api_key: ApiKeySchema, token: z.string().openapi({ example: 'myk_a1b2c3d4_…' }) }) } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const principal = c.get('principal');
  const createdBy = principal.kind === 'session' ? principal.userId : null;
  const created = await createApiKey(c.get('db'), c.get('projectId'), c.req.valid('json'), createdBy);
  return c.json(created, 201);
};
