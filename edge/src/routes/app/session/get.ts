import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { WhoAmISchema } from '../../../contracts/console-session.js';
import { listMemberships, presentSignedIn } from '../../../services/console/who-am-i.js';
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
  const [signedIn, memberships] = await Promise.all([presentSignedIn(db, c.get('config'), session.id), listMemberships(db, session.userId)]);
  return c.json({ ...signedIn, memberships }, 200);
};
