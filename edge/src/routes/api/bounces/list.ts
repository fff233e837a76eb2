import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { BounceCursorSchema, BounceSchema, BOUNCE_LIMIT_DEFAULT, BOUNCE_LIMIT_MAX, ListBouncesQuery } from '../../../contracts/bounce.js';
import { listBounces } from '../../../services/bounces/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/bounces',
  permission: 'bounces:read',
  summary: 'List bounces and complaints',
  description: `The project's bounce and complaint records (docs/bounces.md), newest first by \`(created_at, id)\`, a page at a time: \`limit\` defaults to ${BOUNCE_LIMIT_DEFAULT} (at most ${BOUNCE_LIMIT_MAX}). For the next page send \`next.before\` and \`next.before_id\` as \`before\` and \`before_id\`; one without the other is 400. \`next\` is null on the last page. No total, no offset. Filters: \`type\` (\`hard\`, \`soft\`, \`complaint\`), \`recipient\` (an address, any case), \`email_id\`; an unknown type or a malformed id is 400 naming the parameter.`,
  tags: ['Bounces'],
  request: { query: ListBouncesQuery },
  responses: {
    200: {
      description: 'A page of bounce records',
      content: { 'application/json': { schema: z.object({ bounces: z.array(BounceSchema), next: BounceCursorSchema.nullable() }) } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { limit, type, recipient, email_id, before, before_id } = c.req.valid('query');
  const cursor = before !== undefined && before_id !== undefined ? { before, before_id } : undefined;
  return c.json(await listBounces(c.get('db'), c.get('projectId'), { limit, type, recipient, emailId: email_id, cursor }), 200);
};
