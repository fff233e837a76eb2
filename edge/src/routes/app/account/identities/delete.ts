import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { IdParams } from '../../../../contracts/common.js';
import { unlinkIdentity } from '../../../../services/console/identities.js';
import { assertRecentSignIn } from '../../../../services/console/recent-sign-in.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'delete',
  path: '/app/api/account/identities/{id}',
  permission: 'session',
  auditType: 'auth.oidc.unlinked',
  summary: 'Unlink an identity provider from your account',
  description: 'Removes one of the signed-in user\'s linked identities: signing in through it no longer reaches this account (sessions it opened stay, until the provider is disabled or deleted). 403 when the session signed in more than 15 minutes ago (sign in again first); 404 for an unknown id or another user\'s; 409 `this is the last way to sign in to this account: …` when the account has no password, no passkey and no other linked identity.',
  tags: ['Console account'],
  errors: [404, 409],
  request: { params: IdParams },
  responses: { 204: { description: 'Unlinked' } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = sessionOf(c);
  assertRecentSignIn(session.signedInAt, 'unlink an identity provider');
  await unlinkIdentity(c.get('db'), session.userId, c.req.valid('param').id);
  return c.body(null, 204);
};
