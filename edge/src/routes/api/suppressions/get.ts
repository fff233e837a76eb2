import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { SuppressionSchema } from '../../../contracts/suppression.js';
import { getSuppression } from '../../../services/suppressions/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/suppressions/{id}',
  permission: 'suppressions:read',
  summary: 'Get a suppression',
  description: 'Expired entries too (`expires_at` in the past: no longer applied). Another project\'s id is 404, as an unknown one.',
  tags: ['Suppressions'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The suppression', content: { 'application/json': { schema: z.object({ suppression: SuppressionSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ suppression: await getSuppression(c.get('db'), c.get('projectId'), c.req.valid('param').id) }, 200);
