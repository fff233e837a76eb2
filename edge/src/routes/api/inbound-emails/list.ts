import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { InboundCursorSchema, InboundEmailSchema, INBOUND_LIMIT_DEFAULT, INBOUND_LIMIT_MAX, ListInboundQuery } from '../../../contracts/inbound-email.js';
import { listInboundEmails } from '../../../services/inbound-emails/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/inbound-emails',
  permission: 'inbound:read',
  summary: 'List inbound email',
  description: `Newest first by \`(received_at, id)\`, a page at a time: \`limit\` defaults to ${INBOUND_LIMIT_DEFAULT} (at most ${INBOUND_LIMIT_MAX}). For the next page send \`next.before\` and \`next.before_id\` (the last row's \`received_at\` and \`id\`) as \`before\` and \`before_id\`; one without the other is 400. \`next\` is null on the last page. No total, no offset.`,
  tags: ['Inbound email'],
  request: { query: ListInboundQuery },
  responses: {
    200: {
      description: 'A page of inbound records',
      content: { 'application/json': { schema: z.object({ inbound_emails: z.array(InboundEmailSchema), next: InboundCursorSchema.nullable() }) } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { limit, status, before, before_id } = c.req.valid('query');
  const cursor = before !== undefined && before_id !== undefined ? { before, before_id } : undefined;
  return c.json(await listInboundEmails(c.get('db'), c.get('projectId'), { limit, status, cursor }), 200);
};
