import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { LocalizationRecordSchema, VersionParams } from '../../../contracts/template.js';
import { listLocalizations } from '../../../services/templates/localizations.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/templates/{templateId}/versions/{versionId}/localizations',
  permission: 'templates:read',
  summary: 'List a version\'s localizations',
  description: 'Subject and bodies per language, sorted by language.',
  tags: ['Templates'],
  request: { params: VersionParams },
  errors: [404],
  responses: {
    200: { description: 'The localizations', content: { 'application/json': { schema: z.object({ localizations: z.array(LocalizationRecordSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { templateId, versionId } = c.req.valid('param');
  return c.json(await listLocalizations(c.get('db'), c.get('projectId'), templateId, versionId), 200);
};
