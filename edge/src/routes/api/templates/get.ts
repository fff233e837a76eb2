import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { TemplateParams, TemplateWithVersionsSchema } from '../../../contracts/template.js';
import { getTemplate } from '../../../services/templates/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/templates/{templateId}',
  permission: 'templates:read',
  summary: 'Get a template with its versions',
  description: 'The template and its version list, newest number first (the list `GET .../versions` returns); `active_version_id` is the version sends resolve.',
  tags: ['Templates'],
  request: { params: TemplateParams },
  errors: [404],
  responses: {
    200: { description: 'The template', content: { 'application/json': { schema: z.object({ template: TemplateWithVersionsSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await getTemplate(c.get('db'), c.get('projectId'), c.req.valid('param').templateId), 200);
