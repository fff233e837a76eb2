import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { clearedSessionCookie, closeAllSessions } from '../../../services/console/sessions.js';
import { sessionOf } from './session-of.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/app/api/session/sign-out-all',
  permission: 'session',
  auditType: 'auth.logout_all',
  summary: 'Sign out everywhere',
  description: 'Ends every session of the user, this one included, on every device (`users.sessions_valid_after` voids them at once), and clears the cookie.',
  tags: ['Console session'],
  responses: { 204: { description: 'Every session ended; the cookie is cleared' } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await closeAllSessions(c.get('db'), sessionOf(c).userId);
  return c.body(null, 204, { 'Set-Cookie': clearedSessionCookie(c.get('config')) });
};
