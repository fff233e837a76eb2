import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { AuthenticationOptionsSchema } from '../../../../contracts/console-passkeys.js';
import { authenticationOptions } from '../../../../services/console/passkeys/sign-in.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../../middleware/rate-limit.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/app/api/session/passkey/options',
  permission: 'public',
  auditType: null,
  summary: 'Start signing in with a passkey',
  description: 'WebAuthn request options for `navigator.credentials.get()`: a fresh challenge (valid 5 minutes, once), the rpID (the host of `server.public_url`), user verification required, and no account named: the browser offers the passkeys it holds for this site. No body. Counts against `ratelimit.login_per_minute` of the client address (429 beyond), like the sign-in itself.',
  tags: ['Console session'],
  responses: {
    200: { description: 'The request options (PublicKeyCredentialRequestOptionsJSON)', content: { 'application/json': { schema: AuthenticationOptionsSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  enforceLimit(await checkLimit(c, 'login', addressBucketOf(c)));
  return c.json(await authenticationOptions(c.get('db'), c.get('config')) as unknown as Record<string, unknown>, 200);
};
