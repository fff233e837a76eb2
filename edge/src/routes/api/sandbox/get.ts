import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { EmailDetailSchema } from '../../../contracts/email.js';
import { getEmail } from '../../../services/emails/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/sandbox/emails/{id}',
  permission: 'sandbox:write',
  summary: 'Read one captured email',
  description: 'As `GET /api/v1/emails/{id}`, for sandbox sends only (another email is 404): the captured message\'s content and headers. Needs `sandbox:write`, what a sandbox key sends with (`emails:read` reads the same records in the email log, not here).',
  tags: ['Sandbox'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The record', content: { 'application/json': { schema: z.object({ email: EmailDetailSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ email: await getEmail(c.get('db'), c.get('projectId'), c.req.valid('param').id, { sandboxOnly: true }) }, 200);
