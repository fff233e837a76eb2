import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { integerQuery, Timestamp } from '../../../contracts/common.js';
import { listProjectAuditEvents } from '../../../services/audit/list.js';

export const AUDIT_LIMIT_DEFAULT = 50;
export const AUDIT_LIMIT_MAX = 200;
const OFFSET_MAX = 100_000;

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
    query: z.object({
      limit: integerQuery('limit', 1, AUDIT_LIMIT_MAX, AUDIT_LIMIT_DEFAULT),
      offset: integerQuery('offset', 0, OFFSET_MAX, 0),
    }),
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
