import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CreateUserSchema, UserSchema } from '../../../contracts/admin.js';
import { createUser } from '../../../services/users/create.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/users',
  permission: 'platform:admin',
  summary: 'Create a user',
  tags: ['Admin'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateUserSchema } } } },
  errors: [409],
  responses: { 201: { description: 'User created', content: { 'application/json': { schema: z.object({ user: UserSchema }) } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ user: await createUser(c.get('db'), c.req.valid('json')) }, 201);
