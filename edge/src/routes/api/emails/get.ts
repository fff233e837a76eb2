import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { EmailDetailSchema } from '../../../contracts/email.js';
import { getEmail } from '../../../services/emails/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/emails/{id}',
  permission: 'emails:read',
  summary: 'Get one recipient\'s email',
  description: 'The log record with the message\'s content (`text`, `html`, `reply_to`, attachment metadata, the `Message-ID` header) and every delivery attempt (`delivery_attempts`: outcome, SMTP code and reply, server, node, start and duration).',
  tags: ['Emails'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The record', content: { 'application/json': { schema: z.object({ email: EmailDetailSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ email: await getEmail(c.get('db'), c.get('projectId'), c.req.valid('param').id) }, 200);
