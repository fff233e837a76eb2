import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteSmtpServer } from '../../../services/smtp-servers/delete.js';
import { projectScope } from '../../../services/smtp-servers/scope.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/smtp-servers/{id}',
  permission: 'smtpservers:delete',
  summary: 'Remove an SMTP server',
  description: 'Mail not yet claimed by a relay node goes through the next server, the shared pool or the recipients\' MX. Another project\'s id is 404 `smtp server not found`.',
  tags: ['SMTP servers'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteSmtpServer(c.get('db'), projectScope(c.get('projectId')), c.req.valid('param').id);
  return c.body(null, 204);
};
