import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { MemberSchema } from '../../../contracts/member.js';
import { listMembers } from '../../../services/members/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/members',
  permission: 'members:read',
  role: 'member',
  summary: 'List the project\'s members',
  description: 'Every member with their role and custom group, oldest membership first. Any member may read it; a key needs `members:read`. Pending invitations are `GET /api/v1/invitations`.',
  tags: ['Members'],
  responses: {
    200: { description: 'The members', content: { 'application/json': { schema: z.object({ members: z.array(MemberSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ members: await listMembers(c.get('db'), c.get('projectId')) }, 200);
