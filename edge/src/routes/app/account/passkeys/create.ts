import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { AddPasskeyBody, PasskeyEnvelopeSchema } from '../../../../contracts/console-passkeys.js';
import { registerPasskey } from '../../../../services/console/passkeys/registration.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/app/api/account/passkeys',
  permission: 'session',
  auditType: 'auth.passkey.added',
  summary: 'Add a passkey',
  description: [
    'Stores the passkey the authenticator made from `POST /app/api/account/passkeys/registration-options`, under `name` (1 to 100 characters; several passkeys per user).',
    'Refusals, nothing stored: 400 for an unknown, expired (5 minutes) or already used challenge, or one given to another user (ask for new options);',
    '400 naming the problem when the answer does not verify (origin other than `server.public_url`\'s, rpID hash other than its host, user not verified, malformed attestation);',
    '409 when this credential is registered already.',
  ].join(' '),
  tags: ['Console passkeys'],
  errors: [409],
  request: { body: { content: { 'application/json': { schema: AddPasskeyBody } }, required: true } },
  responses: {
    201: { description: 'The passkey is stored', content: { 'application/json': { schema: PasskeyEnvelopeSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { name, response } = c.req.valid('json');
  const passkey = await registerPasskey(c.get('db'), c.get('config'), sessionOf(c).userId, name, response);
  return c.json({ passkey }, 201);
};
