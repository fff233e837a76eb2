import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { RegistrationOptionsSchema } from '../../../../contracts/console-passkeys.js';
import { registrationOptions } from '../../../../services/console/passkeys/registration.js';
import { assertRecentSignIn } from '../../../../services/console/recent-sign-in.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/app/api/account/passkeys/registration-options',
  permission: 'session',
  auditType: null, // nothing is changed yet: the passkey is recorded when it is added
  summary: 'Start registering a passkey',
  description: 'WebAuthn creation options for `navigator.credentials.create()`: a fresh challenge (valid 5 minutes, once, for this user only), the relying party (`rp.id`: the host of `server.public_url`), the user, the passkeys the user has already (`excludeCredentials`), a discoverable credential with user verification required and no attestation. Send the authenticator\'s answer to `POST /app/api/account/passkeys`. 403 when the session signed in more than 15 minutes ago (sign in again first); 409 when the user has 20 passkeys already.',
  errors: [409],
  tags: ['Console passkeys'],
  responses: {
    200: { description: 'The creation options (PublicKeyCredentialCreationOptionsJSON)', content: { 'application/json': { schema: RegistrationOptionsSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = sessionOf(c);
  assertRecentSignIn(session.signedInAt, 'add a passkey');
  return c.json(await registrationOptions(c.get('db'), c.get('config'), session.userId) as unknown as Record<string, unknown>, 200);
};
