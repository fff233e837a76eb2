import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { WhoAmISchema } from '../../../contracts/console-session.js';
import { whoAmI } from '../../../services/console/who-am-i.js';
import { sessionOf } from './session-of.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/app/api/session',
  permission: 'session',
  summary: 'Who is signed in',
  description: 'The signed-in user, the session (its expiries and current project) and every project membership. 401 without a live session.',
  tags: ['Console session'],
  responses: {
    200: { description: 'The user, session and memberships', content: { 'application/json': { schema: WhoAmISchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = sessionOf(c);
  const db = c.get('db');
  return c.json(await whoAmI(db, c.get('config'), session), 200);
};
