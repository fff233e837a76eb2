import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { IdParams } from '../../../../contracts/common.js';
import { clearedSessionCookie } from '../../../../services/console/sessions.js';
import { revokeSession } from '../../../../services/console/session-list.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'delete',
  path: '/app/api/account/sessions/{id}',
  permission: 'session',
  auditType: 'auth.session.revoked',
  summary: 'End one of your sessions',
  description: 'Signs out one of the signed-in user\'s sessions, on whatever device: its row is deleted, so its cookie is refused (401) on `/app/api` and `/api/v1` from now on, and its event streams end within `console.events_session_check`. Ending this very session also clears the cookie, as sign-out does. 404 `session not found` for an unknown id or another user\'s session, which is left alone. Recorded as `auth.session.revoked`.',
  tags: ['Console session'],
  errors: [404],
  request: { params: IdParams },
  responses: { 204: { description: 'The session has ended' } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = sessionOf(c);
  const { id } = c.req.valid('param');
  await revokeSession(c.get('db'), session.userId, id);
  return id === session.id ? c.body(null, 204, { 'Set-Cookie': clearedSessionCookie(c.get('config')) }) : c.body(null, 204);
};
