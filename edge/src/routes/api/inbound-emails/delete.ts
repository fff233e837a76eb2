import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteInboundEmail } from '../../../services/inbound-emails/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/inbound-emails/{id}',
  permission: 'inbound:delete',
  summary: 'Delete an inbound email',
  description: 'The record is removed, then its raw message and attachments are removed from storage, best-effort: a storage failure is logged and does not change the answer.',
  tags: ['Inbound email'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteInboundEmail(c.get('db'), c.env.MAIL_STORE, c.get('projectId'), c.req.valid('param').id);
  return c.body(null, 204);
};
