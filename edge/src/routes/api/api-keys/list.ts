import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { ApiKeySchema } from '../../../contracts/api-key.js';
import { listApiKeys } from '../../../services/api-keys/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/api-keys',
  permission: 'apikeys:read',
  role: 'member',
  summary: 'List API keys',
  description: 'Newest first. Shows each key\'s prefix, never its token.',
  tags: ['API keys'],
  responses: {
    200: { description: 'The project\'s keys', content: { 'application/json': { schema: z.object({ api_keys: z.array(ApiKeySchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ api_keys: await listApiKeys(c.get('db'), c.get('projectId')) }, 200);
