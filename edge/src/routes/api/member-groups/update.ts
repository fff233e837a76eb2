import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { MemberGroupSchema, UpdateMemberGroupSchema } from '../../../contracts/member.js';
import { updateMemberGroup } from '../../../services/member-groups/update.js';

export const route = defineRoute({
  method: 'patch',
  path: '/api/v1/member-groups/{id}',
  permission: 'members:write',
  role: 'admin',
  summary: 'Rename a member group or replace its permissions',
  description: 'The same list rules as create (`*`, unknown and session-only entries: 400 naming the entry). Its members hold the new list from their next request. A name taken: 409; an unknown group: 404. Needs the admin or owner role (a key: `members:write`).',
  tags: ['Members'],
  request: {
    params: IdParams,
    body: { required: true, content: { 'application/json': { schema: UpdateMemberGroupSchema } } },
  },
  errors: [404, 409],
  responses: {
    200: { description: 'The group as changed', content: { 'application/json': { schema: z.object({ member_group: MemberGroupSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ member_group: await updateMemberGroup(c.get('db'), c.get('projectId'), c.req.valid('param').id, c.req.valid('json')) }, 200);
