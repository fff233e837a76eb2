import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { deleteProject } from '../../../services/projects/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/project',
  permission: 'project:delete',
  role: 'owner',
  summary: 'Delete the project',
  description: 'Deletes the project of the request and everything in it. Only its owner (signed in) or a platform credential may; no API key can, whatever it holds.',
  tags: ['Project'],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteProject(c.get('db'), c.get('projectId'));
  return c.body(null, 204);
};
