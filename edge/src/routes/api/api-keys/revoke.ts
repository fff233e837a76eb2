import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { ApiKeySchema } from '../../../contracts/api-key.js';
import { IdParams } from '../../../contracts/common.js';
import { revokeApiKey } from '../../../services/api-keys/revoke.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/api-keys/{id}/revoke',
  permission: 'apikeys:write',
  role: 'admin',
  summary: 'Revoke an API key',
  description: 'Effective on the next request made with the key; the record stays in the list with `revoked: true`.',
  tags: ['API keys'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The revoked key', content: { 'application/json': { schema: z.object({ api_key: ApiKeySchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ api_key: await revokeApiKey(c.get('db'), c.get('projectId'), c.req.valid('param').id) }, 200);
