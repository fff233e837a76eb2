import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { SwitchProjectBody, WhoAmISchema } from '../../../contracts/console-session.js';
import { switchProject, whoAmI } from '../../../services/console/who-am-i.js';
import { sessionOf } from './session-of.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'put',
  path: '/app/api/session/project',
  permission: 'session',
  auditType: 'session.project_switched',
  summary: 'Switch the current project',
  description: 'The project the session works in from now on (on /api/v1 too, when a request names none in `X-Service-Project-Id`). 403 `not a member of this project` for any project the user is not a member of, whether it exists or not; 403 `this project requires single sign-on: sign in through your identity provider to use it` for a project that requires single sign-on when this session was not opened through it.',
  tags: ['Console session'],
  request: { body: { content: { 'application/json': { schema: SwitchProjectBody } }, required: true } },
  responses: {
    200: { description: 'The user, session and memberships, as `GET /app/api/session`', content: { 'application/json': { schema: WhoAmISchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = sessionOf(c);
  const db = c.get('db');
  await switchProject(db, session.id, session.userId, c.req.valid('json').project_id);
  return c.json(await whoAmI(db, c.get('config'), session), 200);
};
