import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { LinkedIdentityListSchema } from '../../../../contracts/console-identities.js';
import { listIdentities } from '../../../../services/console/identities.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/app/api/account/identities',
  permission: 'session',
  summary: 'List the identity providers linked to your account',
  description: 'The signed-in user\'s identities at identity providers, oldest first: the link\'s id, the provider (id and name), the identity\'s `sub` there, and when it was linked (docs/sso.md "Accounts").',
  tags: ['Console account'],
  responses: {
    200: { description: 'The linked identities', content: { 'application/json': { schema: LinkedIdentityListSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ identities: await listIdentities(c.get('db'), sessionOf(c).userId) }, 200);
