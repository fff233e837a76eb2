import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { SwitchProjectBody, WhoAmISchema } from '../../../contracts/console-session.js';
import { setDefaultProject, whoAmI } from '../../../services/console/who-am-i.js';
import { sessionOf } from '../session/session-of.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'put',
  path: '/app/api/account/default-project',
  permission: 'session',
  auditType: 'account.default_project_changed',
  summary: 'Choose the default project',
  description: 'The project a new session starts in, and the one a session works in when it has chosen none (`PUT /app/api/session/project`) and a request names none. Sessions that chose a project keep it. 403 `not a member of this project` for any project the user is not a member of, whether it exists or not.',
  tags: ['Console session'],
  request: { body: { content: { 'application/json': { schema: SwitchProjectBody } }, required: true } },
  responses: {
    200: { description: 'The user, session and memberships, as `GET /app/api/session`', content: { 'application/json': { schema: WhoAmISchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = sessionOf(c);
  const db = c.get('db');
  await setDefaultProject(db, session.userId, c.req.valid('json').project_id);
  return c.json(await whoAmI(db, c.get('config'), session), 200);
};
