import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateMemberGroupSchema, MemberGroupSchema } from '../../../contracts/member.js';
import { createMemberGroup } from '../../../services/member-groups/create.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/member-groups',
  permission: 'members:write',
  role: 'admin',
  summary: 'Create a custom member group',
  description: [
    'A named permission list inside the project; a member put in it (`PATCH /api/v1/members/{userId}`) holds its list instead of the role\'s on routes without a role gate.',
    'The list holds catalogue entries only: `*` is refused (400 `wildcard * is not allowed in a member group`), as are unknown entries and session-only permissions (400 naming the entry). A name taken in the project: 409.',
    'Needs the admin or owner role (a key: `members:write`).',
  ].join(' '),
  tags: ['Members'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateMemberGroupSchema } } } },
  errors: [409],
  responses: {
    201: { description: 'The group', content: { 'application/json': { schema: z.object({ member_group: MemberGroupSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ member_group: await createMemberGroup(c.get('db'), c.get('projectId'), c.req.valid('json')) }, 201);
