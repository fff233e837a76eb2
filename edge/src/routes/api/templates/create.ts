import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateTemplateSchema, TemplateWithVersionsSchema } from '../../../contracts/template.js';
import { createTemplate } from '../../../services/templates/create.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/templates',
  permission: 'templates:write',
  summary: 'Create a template',
  description: [
    'A template has a name unique in the project (409 otherwise), an optional description and a default language (a BCP 47 tag, `en` unless given) that a render falls back to. It starts with no version: create one with `POST /api/v1/templates/{templateId}/versions`, write its localizations, then activate it. See docs/templates.md.',
  ].join('\n\n'),
  tags: ['Templates'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateTemplateSchema } } } },
  errors: [409],
  responses: {
    201: { description: 'Template created', content: { 'application/json': { schema: z.object({ template: TemplateWithVersionsSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await createTemplate(c.get('db'), c.get('projectId'), c.req.valid('json')), 201);
