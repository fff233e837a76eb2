import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { TemplateParams } from '../../../contracts/template.js';
import { deleteTemplate } from '../../../services/templates/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/templates/{templateId}',
  permission: 'templates:delete',
  summary: 'Delete a template',
  description: 'The template goes with all its versions and their localizations, the active one included; a send naming it afterwards is refused. Messages already sent keep their records.',
  tags: ['Templates'],
  request: { params: TemplateParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteTemplate(c.get('db'), c.get('projectId'), c.req.valid('param').templateId);
  return c.body(null, 204);
};
