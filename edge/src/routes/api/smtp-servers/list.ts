import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { SmtpServerSchema } from '../../../contracts/smtp-server.js';
import { listSmtpServers } from '../../../services/smtp-servers/list.js';
import { projectScope } from '../../../services/smtp-servers/scope.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/smtp-servers',
  permission: 'smtpservers:read',
  summary: 'List the project\'s SMTP servers',
  description: 'The project\'s own servers, oldest first, without passwords. The platform\'s shared pool is not listed here.',
  tags: ['SMTP servers'],
  responses: {
    200: { description: 'The project\'s servers', content: { 'application/json': { schema: z.object({ smtp_servers: z.array(SmtpServerSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ smtp_servers: await listSmtpServers(c.get('db'), projectScope(c.get('projectId'))) }, 200);
