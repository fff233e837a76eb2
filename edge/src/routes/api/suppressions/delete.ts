import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteSuppression } from '../../../services/suppressions/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/suppressions/{id}',
  permission: 'suppressions:delete',
  summary: 'Remove a suppression',
  description: 'Mail from the address is accepted again from the next message on; records already stored keep their status.',
  tags: ['Suppressions'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteSuppression(c.get('db'), c.get('projectId'), c.req.valid('param').id);
  return c.body(null, 204);
};
