import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteWebhook } from '../../../services/webhooks/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/webhooks/{id}',
  permission: 'webhooks:delete',
  summary: 'Delete a webhook',
  description: 'The webhook goes with its delivery records and attempt log; pending retries stop (an attempt already in flight may still arrive).',
  tags: ['Webhooks'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteWebhook(c.get('db'), c.get('projectId'), c.req.valid('param').id);
  return c.body(null, 204);
};
