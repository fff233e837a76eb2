import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CreateProjectSchema, ProjectSchema } from '../../../contracts/admin.js';
import { createProject } from '../../../services/projects/create.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/projects',
  permission: 'platform:admin',
  summary: 'Create a project',
  description: 'With `owner_id`, the user becomes the project\'s owner (and it becomes their default project if they have none).',
  tags: ['Admin'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateProjectSchema } } } },
  responses: { 201: { description: 'Project created', content: { 'application/json': { schema: z.object({ project: ProjectSchema }) } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ project: await createProject(c.get('db'), c.req.valid('json')) }, 201);
