import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { VersionParams } from '../../../contracts/template.js';
import { deleteVersion } from '../../../services/templates/delete-version.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/templates/{templateId}/versions/{versionId}',
  permission: 'templates:delete',
  summary: 'Delete a version',
  description: 'Removes a version that is not active, with its localizations; its number is never given again. The active version is refused: 409 `cannot delete the active version; activate another first`.',
  tags: ['Templates'],
  request: { params: VersionParams },
  errors: [404, 409],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { templateId, versionId } = c.req.valid('param');
  await deleteVersion(c.get('db'), c.get('projectId'), templateId, versionId);
  return c.body(null, 204);
};
