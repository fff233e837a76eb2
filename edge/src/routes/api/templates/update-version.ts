import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { UpdateVersionSchema, VersionParams, VersionSchema } from '../../../contracts/template.js';
import { updateVersion } from '../../../services/templates/update-version.js';

export const route = defineRoute({
  method: 'patch',
  path: '/api/v1/templates/{templateId}/versions/{versionId}',
  permission: 'templates:write',
  summary: 'Update a draft version',
  description: 'Sets `stylesheet_id` or `sample_data` (the same checks as at create; null clears; a field left out stays). A version that is or ever was active is frozen, so that activating it again rolls back exactly: 409 `version <n> was activated and cannot be changed; create a new version`.',
  tags: ['Templates'],
  request: { params: VersionParams, body: { required: true, content: { 'application/json': { schema: UpdateVersionSchema } } } },
  errors: [404, 409],
  responses: {
    200: { description: 'The version', content: { 'application/json': { schema: z.object({ version: VersionSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { templateId, versionId } = c.req.valid('param');
  return c.json(await updateVersion(c.get('db'), c.get('projectId'), templateId, versionId, c.req.valid('json')), 200);
};
