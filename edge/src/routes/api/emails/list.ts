import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { ListEmailsQuery } from '../../../contracts/email.js';
import { listEmails } from '../../../services/emails/list.js';
import { ListResponse, listQuery, PAGING } from './list-query.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/emails',
  permission: 'emails:read',
  summary: 'List the email log',
  description: `One record per recipient of every send, sandbox sends included (\`sandbox: true\`, status \`captured\`). ${PAGING}`,
  tags: ['Emails'],
  request: { query: ListEmailsQuery },
  responses: {
    200: { description: 'A page of the log', content: { 'application/json': { schema: ListResponse } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await listEmails(c.get('db'), c.get('projectId'), listQuery(c.req.valid('query'))), 200);
