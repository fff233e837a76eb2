import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { UserSchema } from '../../../contracts/admin.js';
import { listUsers } from '../../../services/users/list.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/users',
  permission: 'platform:admin',
  summary: 'List users',
  tags: ['Admin'],
  responses: { 200: { description: 'Every user, oldest first', content: { 'application/json': { schema: z.object({ users: z.array(UserSchema) }) } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ users: await listUsers(c.get('db')) }, 200);
