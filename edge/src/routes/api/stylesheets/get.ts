import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { StylesheetSchema } from '../../../contracts/stylesheet.js';
import { getStylesheet } from '../../../services/stylesheets/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/stylesheets/{id}',
  permission: 'templates:read',
  summary: 'Get a stylesheet',
  tags: ['Templates'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The stylesheet', content: { 'application/json': { schema: z.object({ stylesheet: StylesheetSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await getStylesheet(c.get('db'), c.get('projectId'), c.req.valid('param').id), 200);
