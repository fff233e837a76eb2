import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { InboundEmailSchema } from '../../../contracts/inbound-email.js';
import { getInboundEmail } from '../../../services/inbound-emails/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/inbound-emails/{id}',
  permission: 'inbound:read',
  summary: 'Get an inbound email',
  tags: ['Inbound email'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The record', content: { 'application/json': { schema: z.object({ inbound_email: InboundEmailSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ inbound_email: await getInboundEmail(c.get('db'), c.get('projectId'), c.req.valid('param').id) }, 200);
