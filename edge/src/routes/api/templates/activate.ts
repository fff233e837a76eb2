import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { TemplateWithVersionsSchema, VersionParams } from '../../../contracts/template.js';
import { activateVersion } from '../../../services/templates/activate.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/templates/{templateId}/activate/{versionId}',
  permission: 'templates:write',
  summary: 'Activate a version',
  description: 'Atomic (one statement): the next send by this template resolves the version. Activating an earlier version rolls back; a version once activated is frozen, so it renders exactly as it did. A version of another template (or an unknown one) is 404. Activating the active version again changes nothing.',
  tags: ['Templates'],
  request: { params: VersionParams },
  errors: [404],
  responses: {
    200: { description: 'The template with its new `active_version_id`', content: { 'application/json': { schema: z.object({ template: TemplateWithVersionsSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { templateId, versionId } = c.req.valid('param');
  return c.json(await activateVersion(c.get('db'), c.get('projectId'), templateId, versionId), 200);
};
