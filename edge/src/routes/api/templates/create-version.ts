import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateVersionSchema, TemplateParams, VersionSchema } from '../../../contracts/template.js';
import { createVersion } from '../../../services/templates/create-version.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/templates/{templateId}/versions',
  permission: 'templates:write',
  summary: 'Create a template version',
  description: [
    'A new draft, numbered one above the highest number the template ever had: a number is never reused and never fills a gap left by a deleted version. Creating a version does not change what sends resolve; only activation does.',
    'The body is optional (`{}` or none): `stylesheet_id` (a stylesheet of this project, else 400 naming it) and `sample_data` (a JSON document encoded as a string, not an object, at most 65536 characters; anything else is 400 naming it).',
    'If two creates ever collide on a number the answer is 409 `version number collision, retry` and nothing is written; send the request again.',
  ].join('\n\n'),
  tags: ['Templates'],
  request: { params: TemplateParams, body: { required: false, content: { 'application/json': { schema: CreateVersionSchema } } } },
  errors: [404, 409],
  responses: {
    201: { description: 'Version created', content: { 'application/json': { schema: z.object({ version: VersionSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await createVersion(c.get('db'), c.get('projectId'), c.req.valid('param').templateId, c.req.valid('json') ?? {}), 201);
