import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { clearedSessionCookie, closeSession } from '../../../services/console/sessions.js';
import { sessionOf } from './session-of.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'delete',
  path: '/app/api/session',
  permission: 'session',
  auditType: 'auth.logout',
  summary: 'Sign out',
  description: 'Ends this session (its row is deleted: the cookie is worthless from now on) and clears the cookie. Other sessions of the user stay.',
  tags: ['Console session'],
  responses: { 204: { description: 'Signed out; the cookie is cleared' } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await closeSession(c.get('db'), sessionOf(c).id);
  return c.body(null, 204, { 'Set-Cookie': clearedSessionCookie(c.get('config')) });
};
