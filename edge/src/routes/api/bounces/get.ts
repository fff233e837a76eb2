import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { BounceSchema } from '../../../contracts/bounce.js';
import { getBounce } from '../../../services/bounces/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/bounces/{id}',
  permission: 'bounces:read',
  summary: 'Get a bounce or complaint',
  description: 'One bounce record (docs/bounces.md). Another project\'s id is 404, as an unknown one is.',
  tags: ['Bounces'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The record', content: { 'application/json': { schema: z.object({ bounce: BounceSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ bounce: await getBounce(c.get('db'), c.get('projectId'), c.req.valid('param').id) }, 200);
