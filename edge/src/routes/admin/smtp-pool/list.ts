import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { SmtpServerSchema } from '../../../contracts/smtp-server.js';
import { listSmtpServers } from '../../../services/smtp-servers/list.js';
import { POOL_SCOPE } from '../../../services/smtp-servers/scope.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/smtp-pool',
  permission: 'platform:admin',
  summary: 'List the shared SMTP pool',
  description: 'The pool\'s servers, oldest first, without passwords; projects\' own servers are not listed.',
  tags: ['Admin'],
  responses: {
    200: { description: 'The pool\'s servers', content: { 'application/json': { schema: z.object({ smtp_servers: z.array(SmtpServerSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ smtp_servers: await listSmtpServers(c.get('db'), POOL_SCOPE) }, 200);
