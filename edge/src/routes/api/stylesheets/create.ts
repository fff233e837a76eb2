import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateStylesheetSchema, CSS_MAX, StylesheetSchema } from '../../../contracts/stylesheet.js';
import { createStylesheet } from '../../../services/stylesheets/create.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/stylesheets',
  permission: 'templates:write',
  summary: 'Create a stylesheet',
  description: `CSS a template version names by \`stylesheet_id\`; it is inlined into the version's HTML at render time. \`name\` is unique in the project (409 otherwise); \`css\` is at most ${CSS_MAX} characters.`,
  tags: ['Templates'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateStylesheetSchema } } } },
  errors: [409],
  responses: {
    201: { description: 'Stylesheet created', content: { 'application/json': { schema: z.object({ stylesheet: StylesheetSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await createStylesheet(c.get('db'), c.get('projectId'), c.req.valid('json')), 201);
