import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CreateSmtpServerSchema, SmtpServerSchema } from '../../../contracts/smtp-server.js';
import { createSmtpServer } from '../../../services/smtp-servers/create.js';
import { POOL_SCOPE } from '../../../services/smtp-servers/scope.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/smtp-pool',
  permission: 'platform:admin',
  summary: 'Add a server to the shared SMTP pool',
  description: 'Relay nodes deliver the mail of every project that has no SMTP server of its own through the shared pool (oldest server first), else to the recipients\' MX. Same body and record as `POST /api/v1/smtp-servers`, with `project_id` null; the password is sealed and never returned.',
  tags: ['Admin'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateSmtpServerSchema } } } },
  responses: {
    201: { description: 'Server added to the pool', content: { 'application/json': { schema: z.object({ smtp_server: SmtpServerSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ smtp_server: await createSmtpServer(c.get('db'), c.get('config'), POOL_SCOPE, c.req.valid('json')) }, 201);
