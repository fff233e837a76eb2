import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { TemplateSchema } from '../../../contracts/template.js';
import { listTemplates } from '../../../services/templates/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/templates',
  permission: 'templates:read',
  summary: 'List templates',
  description: 'All of the project\'s templates, newest first, in one answer (no paging), without their versions: `GET /api/v1/templates/{templateId}` has them.',
  tags: ['Templates'],
  responses: {
    200: { description: 'The templates', content: { 'application/json': { schema: z.object({ templates: z.array(TemplateSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await listTemplates(c.get('db'), c.get('projectId')), 200);
