import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { TemplateParams, VersionSchema } from '../../../contracts/template.js';
import { listVersions } from '../../../services/templates/list-versions.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/templates/{templateId}/versions',
  permission: 'templates:read',
  summary: 'List a template\'s versions',
  description: 'Newest number first. `active` marks the version sends resolve; `first_activated_at` is set on a version that is or was active, whose content is frozen.',
  tags: ['Templates'],
  request: { params: TemplateParams },
  errors: [404],
  responses: {
    200: { description: 'The versions', content: { 'application/json': { schema: z.object({ versions: z.array(VersionSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await listVersions(c.get('db'), c.get('projectId'), c.req.valid('param').templateId), 200);
