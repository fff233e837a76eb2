import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteMemberGroup } from '../../../services/member-groups/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/member-groups/{id}',
  permission: 'members:delete',
  role: 'admin',
  summary: 'Delete a member group',
  description: 'Its members go back to their role\'s permissions; pending invitations naming it invite to the role alone. An unknown group: 404. Needs the admin or owner role (a key: `members:delete`).',
  tags: ['Members'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteMemberGroup(c.get('db'), c.get('projectId'), c.req.valid('param').id);
  return c.body(null, 204);
};
