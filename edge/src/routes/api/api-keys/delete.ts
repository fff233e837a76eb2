import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteApiKey } from '../../../services/api-keys/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/api-keys/{id}',
  permission: 'apikeys:delete',
  role: 'admin',
  summary: 'Delete an API key',
  tags: ['API keys'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteApiKey(c.get('db'), c.get('projectId'), c.req.valid('param').id);
  return c.body(null, 204);
};
