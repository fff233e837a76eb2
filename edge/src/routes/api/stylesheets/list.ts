import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { StylesheetSchema } from '../../../contracts/stylesheet.js';
import { listStylesheets } from '../../../services/stylesheets/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/stylesheets',
  permission: 'templates:read',
  summary: 'List stylesheets',
  description: 'All of the project\'s stylesheets with their CSS, newest first, in one answer (no paging).',
  tags: ['Templates'],
  responses: {
    200: { description: 'The stylesheets', content: { 'application/json': { schema: z.object({ stylesheets: z.array(StylesheetSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await listStylesheets(c.get('db'), c.get('projectId')), 200);
