import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { TemplateParams, TemplateWithVersionsSchema, UpdateTemplateSchema } from '../../../contracts/template.js';
import { updateTemplate } from '../../../services/templates/update.js';

export const route = defineRoute({
  method: 'patch',
  path: '/api/v1/templates/{templateId}',
  permission: 'templates:write',
  summary: 'Update a template',
  description: 'Changes `name` (409 when another template has it), `description` or `default_language`; a field left out stays. Versions and their content are not touched. An empty body changes nothing.',
  tags: ['Templates'],
  request: { params: TemplateParams, body: { required: true, content: { 'application/json': { schema: UpdateTemplateSchema } } } },
  errors: [404, 409],
  responses: {
    200: { description: 'The template', content: { 'application/json': { schema: z.object({ template: TemplateWithVersionsSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await updateTemplate(c.get('db'), c.get('projectId'), c.req.valid('param').templateId, c.req.valid('json')), 200);
