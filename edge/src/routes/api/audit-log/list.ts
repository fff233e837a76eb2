import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { Timestamp } from '../../../contracts/common.js';
import { AUDIT_LIMIT_DEFAULT, AUDIT_LIMIT_MAX, auditPageQuery } from '../../../contracts/audit-page.js';
import { listProjectAuditEvents } from '../../../services/audit/list.js';

const AuditEventSchema = z.object({
  id: z.string(),
  category: z.string().openapi({ example: 'project' }),
  type: z.string().openapi({ example: 'apikey.created' }),
  project_id: z.uuid().nullable(),
  actor_id: z.uuid().nullable(),
  actor_email: z.string().nullable().openapi({ description: 'The member\'s email, or `api key <name>` / `admin api key <name>`' }),
  client_ip: z.string().nullable(),
  method: z.string().nullable(),
  path: z.string().nullable(),
  status: z.number().int().nullable(),
  created_at: Timestamp,
}).openapi('AuditEvent');

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/audit-log',
  permission: 'audit:read',
  role: 'admin',
  summary: 'The project audit log',
  description: `Successful configuration changes in this project, newest first. \`limit\` defaults to ${AUDIT_LIMIT_DEFAULT} (at most ${AUDIT_LIMIT_MAX}); \`offset\` to 0. Sessions need the admin or owner role; keys need \`audit:read\`.`,
  tags: ['Audit log'],
  request: {
    query: z.object(auditPageQuery),
  },
  responses: {
    200: {
      description: 'A page of events',
      content: { 'application/json': { schema: z.object({ events: z.array(AuditEventSchema), limit: z.number().int(), offset: z.number().int() }) } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { limit, offset } = c.req.valid('query');
  const events = await listProjectAuditEvents(c.get('db'), c.get('projectId'), limit, offset);
  return c.json({ events, limit, offset }, 200);
};
