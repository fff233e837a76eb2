import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteStylesheet } from '../../../services/stylesheets/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/stylesheets/{id}',
  permission: 'templates:delete',
  summary: 'Delete a stylesheet',
  description: 'A stylesheet that a template version names (draft or not) is refused with 409 naming it and a version using it.',
  tags: ['Templates'],
  request: { params: IdParams },
  errors: [404, 409],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteStylesheet(c.get('db'), c.get('projectId'), c.req.valid('param').id);
  return c.body(null, 204);
};
