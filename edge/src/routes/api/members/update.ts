import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { MemberParams, MemberSchema, UpdateMemberSchema } from '../../../contracts/member.js';
import { updateMember } from '../../../services/members/update.js';
import { peopleActor } from './actor.js';

export const route = defineRoute({
  method: 'patch',
  path: '/api/v1/members/{userId}',
  permission: 'members:write',
  role: 'admin',
  summary: 'Change a member\'s role or group',
  description: [
    'Sets `role` (owner, admin, member) and/or `group_id` (a custom group of this project, or null for none).',
    'Needs the admin or owner role (a key: `members:write`). Only an owner\'s session or a platform credential may grant the owner role or change or demote an owner: an admin gets 403 `project owner role required …`, and every project key, even one holding `*`, 403 `project keys cannot change ownership: use an owner\'s session or a platform credential` (nothing changes).',
    'The last owner cannot be demoted: 409. A `group_id` that is not a group of this project: 400 naming it. An unknown member: 404.',
  ].join(' '),
  tags: ['Members'],
  request: {
    params: MemberParams,
    body: { required: true, content: { 'application/json': { schema: UpdateMemberSchema } } },
  },
  errors: [404, 409],
  responses: {
    200: { description: 'The member as changed', content: { 'application/json': { schema: z.object({ member: MemberSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const member = await updateMember(c.get('db'), c.get('projectId'), c.req.valid('param').userId, c.req.valid('json'), peopleActor(c));
  return c.json({ member }, 200);
};
