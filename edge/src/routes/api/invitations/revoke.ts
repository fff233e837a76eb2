import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { revokeInvitation } from '../../../services/invitations/revoke.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/invitations/{id}',
  permission: 'members:delete',
  role: 'admin',
  summary: 'Revoke a pending invitation',
  description: 'Its link is refused from then on, exactly as an unknown one. An accepted or unknown invitation: 404. Needs the admin or owner role (a key: `members:delete`).',
  tags: ['Members'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Revoked' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await revokeInvitation(c.get('db'), c.get('projectId'), c.req.valid('param').id);
  return c.body(null, 204);
};
