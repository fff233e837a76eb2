import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { Uuid } from '../../../contracts/common.js';
import { AUDIT_PAGE_TEXT, auditPageQuery } from '../../../contracts/audit-page.js';
import { AdminSecurityEventSchema, SecurityEventType } from '../../../contracts/security-event.js';
import { listSecurityEvents } from '../../../services/audit/security-trail.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/security-events',
  permission: 'platform:admin',
  summary: 'Every account\'s security trail',
  description: `The security trail (category \`security\`) of every account, newest first: sign-ins and refusals, sign-outs, two-factor, passkey and session changes, and the platform administration changes (whose \`user_id\` is the platform credential). \`user_id\` keeps one account's events, \`type\` one type (exact). ${AUDIT_PAGE_TEXT}`,
  tags: ['Admin'],
  request: {
    query: z.object({
      user_id: Uuid.optional().openapi({ param: { name: 'user_id', in: 'query' } }),
      type: SecurityEventType.optional(),
      ...auditPageQuery,
    }),
  },
  responses: {
    200: {
      description: 'A page of events',
      content: { 'application/json': { schema: z.object({ events: z.array(AdminSecurityEventSchema), limit: z.number().int(), offset: z.number().int() }).openapi('AdminSecurityEventPage') } },
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { user_id: userId, type, limit, offset } = c.req.valid('query');
  const events = await listSecurityEvents(c.get('db'), { userId, type }, { limit, offset });
  return c.json({ events, limit, offset }, 200);
};
