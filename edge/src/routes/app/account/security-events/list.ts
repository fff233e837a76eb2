import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { AUDIT_PAGE_TEXT, auditPageQuery } from '../../../../contracts/audit-page.js';
import { SecurityEventSchema } from '../../../../contracts/security-event.js';
import { listOwnSecurityEvents } from '../../../../services/audit/security-trail.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/app/api/account/security-events',
  permission: 'session',
  summary: 'Your security trail',
  description: `The signed-in user's own account security events, newest first: sign-ins and refused sign-ins (with which leg failed), sign-outs, two-factor and passkey changes, sessions ended, single sign-on. Never another user's; a sign-in tried with an unknown email belongs to no account. ${AUDIT_PAGE_TEXT}`,
  tags: ['Console session'],
  request: { query: z.object(auditPageQuery) },
  responses: {
    200: {
      description: 'A page of events',
      content: { 'application/json': { schema: z.object({ events: z.array(SecurityEventSchema), limit: z.number().int(), offset: z.number().int() }).openapi('SecurityEventPage') } },
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const page = c.req.valid('query');
  const events = await listOwnSecurityEvents(c.get('db'), sessionOf(c).userId, page);
  return c.json({ events, ...page }, 200);
};
