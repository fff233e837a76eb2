import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { StylesheetSchema, UpdateStylesheetSchema } from '../../../contracts/stylesheet.js';
import { updateStylesheet } from '../../../services/stylesheets/update.js';

export const route = defineRoute({
  method: 'patch',
  path: '/api/v1/stylesheets/{id}',
  permission: 'templates:write',
  summary: 'Update a stylesheet',
  description: 'Renames it (409 when the name is taken) or changes its CSS. CSS that an activated template version renders with is frozen with that version, so that a rollback renders exactly what was live: changing it is 409 naming the stylesheet and a version using it; create a new stylesheet and a new version naming it instead. A rename is always allowed.',
  tags: ['Templates'],
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: UpdateStylesheetSchema } } } },
  errors: [404, 409],
  responses: {
    200: { description: 'The stylesheet', content: { 'application/json': { schema: z.object({ stylesheet: StylesheetSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await updateStylesheet(c.get('db'), c.get('projectId'), c.req.valid('param').id, c.req.valid('json')), 200);
