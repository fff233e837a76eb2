import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { IdParams } from '../../../../contracts/common.js';
import { PasskeyEnvelopeSchema, RenamePasskeyBody } from '../../../../contracts/console-passkeys.js';
import { renamePasskey } from '../../../../services/console/passkeys/manage.js';
import { assertRecentSignIn } from '../../../../services/console/recent-sign-in.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'patch',
  path: '/app/api/account/passkeys/{id}',
  permission: 'session',
  auditType: 'auth.passkey.renamed',
  summary: 'Rename a passkey',
  description: 'Sets the name (1 to 100 characters) of one of the signed-in user\'s passkeys. Needs a recent sign-in, as adding one does: 403 `sign in again to rename a passkey: …` when the session signed in more than 15 minutes ago, and nothing changes. 404 for an unknown id or another user\'s passkey.',
  tags: ['Console passkeys'],
  errors: [404],
  request: { params: IdParams, body: { content: { 'application/json': { schema: RenamePasskeyBody } }, required: true } },
  responses: {
    200: { description: 'The renamed passkey', content: { 'application/json': { schema: PasskeyEnvelopeSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = sessionOf(c);
  assertRecentSignIn(session.signedInAt, 'rename a passkey');
  const passkey = await renamePasskey(c.get('db'), session.userId, c.req.valid('param').id, c.req.valid('json').name);
  return c.json({ passkey }, 200);
};
