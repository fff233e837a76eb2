import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteInboundRule } from '../../../services/inbound-rules/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/inbound-rules/{id}',
  permission: 'inbound:write',
  summary: 'Delete an inbound routing rule',
  description: 'The rules after it move up one. Another project\'s rule is 404.',
  tags: ['Inbound rules'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteInboundRule(c.get('db'), c.get('projectId'), c.req.valid('param').id);
  return c.body(null, 204);
};
