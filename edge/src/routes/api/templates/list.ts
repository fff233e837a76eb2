import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { ListTemplatesQuery, TemplateCursorSchema, TemplateSchema, TEMPLATES_LIMIT_DEFAULT, TEMPLATES_LIMIT_MAX } from '../../../contracts/template.js';
import { listTemplates } from '../../../services/templates/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/templates',
  permission: 'templates:read',
  summary: 'List templates',
  description: `The project's templates without their versions (\`GET /api/v1/templates/{templateId}\` has them), newest first by \`(created_at, id)\`, a page at a time: \`limit\` defaults to ${TEMPLATES_LIMIT_DEFAULT} (at most ${TEMPLATES_LIMIT_MAX}). For the next page send \`next.before\` and \`next.before_id\` as \`before\` and \`before_id\`; one without the other is 400. \`next\` is null on the last page. No total, no offset.`,
  tags: ['Templates'],
  request: { query: ListTemplatesQuery },
  responses: {
    200: {
      description: 'A page of templates',
      content: { 'application/json': { schema: z.object({ templates: z.array(TemplateSchema), next: TemplateCursorSchema.nullable() }) } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { limit, before, before_id } = c.req.valid('query');
  const cursor = before !== undefined && before_id !== undefined ? { before, before_id } : undefined;
  return c.json(await listTemplates(c.get('db'), c.get('projectId'), limit, cursor), 200);
};
