import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { MemberParams } from '../../../contracts/member.js';
import { removeMember } from '../../../services/members/remove.js';
import { peopleActor } from './actor.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/members/{userId}',
  permission: 'members:delete',
  role: 'admin',
  summary: 'Remove a member from the project',
  description: [
    'The account stays; its sessions lose this project from their next request. Needs the admin or owner role (a key: `members:delete`). Only an owner\'s session or a platform credential removes an owner: an admin gets 403 `project owner role required …`, every project key, even one holding `*`, 403 `project keys cannot change ownership: use an owner\'s session or a platform credential`.',
    'The last owner cannot be removed: 409. An unknown member: 404. A user whose default project this was falls back to their oldest other membership (or none).',
  ].join(' '),
  tags: ['Members'],
  request: { params: MemberParams },
  errors: [404, 409],
  responses: { 204: { description: 'Removed' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await removeMember(c.get('db'), c.get('projectId'), c.req.valid('param').userId, peopleActor(c));
  return c.body(null, 204);
};
