import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { IdParams } from '../../../../contracts/common.js';
import { deletePasskey } from '../../../../services/console/passkeys/manage.js';
import { assertRecentSignIn } from '../../../../services/console/recent-sign-in.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'delete',
  path: '/app/api/account/passkeys/{id}',
  permission: 'session',
  auditType: 'auth.passkey.deleted',
  summary: 'Delete a passkey',
  description: 'Removes one of the signed-in user\'s passkeys: it signs in no more (sessions it opened stay open). Needs a recent sign-in, as adding one does: 403 `sign in again to delete a passkey: …` when the session signed in more than 15 minutes ago, and nothing changes. 404 for an unknown id or another user\'s passkey.',
  tags: ['Console passkeys'],
  errors: [404],
  request: { params: IdParams },
  responses: { 204: { description: 'The passkey is deleted' } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = sessionOf(c);
  assertRecentSignIn(session.signedInAt, 'delete a passkey');
  await deletePasskey(c.get('db'), session.userId, c.req.valid('param').id);
  return c.body(null, 204);
};
