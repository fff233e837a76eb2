import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { MemberGroupSchema } from '../../../contracts/member.js';
import { listMemberGroups } from '../../../services/member-groups/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/member-groups',
  permission: 'members:read',
  role: 'member',
  summary: 'List the project\'s custom member groups',
  description: 'By name, each with its permission list and how many members it has. Any member may read it; a key needs `members:read`.',
  tags: ['Members'],
  responses: {
    200: { description: 'The groups', content: { 'application/json': { schema: z.object({ member_groups: z.array(MemberGroupSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ member_groups: await listMemberGroups(c.get('db'), c.get('projectId')) }, 200);
