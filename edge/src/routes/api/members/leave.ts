import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { badRequest } from '../../../http/errors.js';
import { removeMember } from '../../../services/members/remove.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/members/leave',
  permission: 'members:read',
  role: 'member',
  auditType: 'member.left',
  summary: 'Leave the project',
  description: [
    'The signed-in user leaves the project the request acts in (`X-Service-Project-Id`, or their default project). Any member may; the last owner may not (409: make another member owner first).',
    'Only a browser session has a user to remove: a key or a platform credential gets 400. Their default project moves to their oldest other membership (or none).',
  ].join(' '),
  tags: ['Members'],
  errors: [409],
  responses: { 204: { description: 'Left' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const principal = c.get('principal');
  if (principal.kind !== 'session') throw badRequest('only a signed-in member can leave a project: a key or platform credential has no membership');
  await removeMember(c.get('db'), c.get('projectId'), principal.userId, { userId: principal.userId, owner: true, key: false });
  return c.body(null, 204);
};
