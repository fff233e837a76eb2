import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { PasskeyListSchema } from '../../../../contracts/console-passkeys.js';
import { listPasskeys } from '../../../../services/console/passkeys/manage.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/app/api/account/passkeys',
  permission: 'session',
  summary: 'List your passkeys',
  description: 'The signed-in user\'s passkeys, oldest first: id, name, when added and last used, and whether the authenticator backs it up. Never the credential id or public key.',
  tags: ['Console passkeys'],
  responses: {
    200: { description: 'The passkeys', content: { 'application/json': { schema: PasskeyListSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ passkeys: await listPasskeys(c.get('db'), sessionOf(c).userId) }, 200);
