import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { ListEmailsQuery } from '../../../contracts/email.js';
import { listEmails } from '../../../services/emails/list.js';
import { ListResponse, listQuery, PAGING } from '../emails/list-query.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/sandbox/emails',
  permission: 'sandbox:write',
  summary: 'List mail captured in the sandbox',
  description: `What sandbox keys sent: the email log's records of their sends only (status \`captured\`, or \`suppressed\`), never delivered. Needs \`sandbox:write\`, what a sandbox key sends with (\`emails:read\` reads the same records in the email log, not here). ${PAGING}`,
  tags: ['Sandbox'],
  request: { query: ListEmailsQuery },
  responses: {
    200: { description: 'A page of captured mail', content: { 'application/json': { schema: ListResponse } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await listEmails(c.get('db'), c.get('projectId'), { ...listQuery(c.req.valid('query')), sandboxOnly: true }), 200);
