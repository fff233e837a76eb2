import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { LiveSessionListSchema } from '../../../../contracts/console-session-list.js';
import { listLiveSessions } from '../../../../services/console/session-list.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/app/api/account/sessions',
  permission: 'session',
  summary: 'List your sessions',
  description: 'The signed-in user\'s live sessions on every device, most recently signed in first: id (never the token), how it signed in, when, its last request, absolute expiry, address and User-Agent, and `current` for this one. Only live sessions: an expired, idle-expired, signed-out or signed-out-everywhere one is not listed.',
  tags: ['Console session'],
  responses: {
    200: { description: 'The live sessions', content: { 'application/json': { schema: LiveSessionListSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = sessionOf(c);
  const sessions = await listLiveSessions(c.get('db'), session.userId, session.id, c.get('config')['console.session_idle_timeout']);
  return c.json({ sessions }, 200);
};
