import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteSmtpServer } from '../../../services/smtp-servers/delete.js';
import { POOL_SCOPE } from '../../../services/smtp-servers/scope.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/admin/smtp-pool/{id}',
  permission: 'platform:admin',
  summary: 'Remove a server from the shared SMTP pool',
  description: 'A project\'s own server id is 404 `smtp server not found` here: projects manage theirs at `/api/v1/smtp-servers`.',
  tags: ['Admin'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await deleteSmtpServer(c.get('db'), POOL_SCOPE, c.req.valid('param').id);
  return c.body(null, 204);
};
