import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { TotpStartedSchema } from '../../../contracts/console-session.js';
import { startTotp } from '../../../services/console/totp.js';
import { assertRecentSignIn } from '../../../services/console/recent-sign-in.js';
import { sessionOf } from '../session/session-of.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/app/api/account/totp',
  permission: 'session',
  auditType: 'auth.2fa.setup_started',
  summary: 'Start turning on two-factor authentication',
  description: 'A new TOTP secret (RFC 6238: SHA-1, 6 digits, 30 s) as an `otpauth://` URI for a QR code and as base32 text. Not in force until confirmed with a code (`POST /app/api/account/totp/confirm`); starting again replaces an unconfirmed secret. 409 when two-factor authentication is on already; 403 when the session signed in more than 15 minutes ago (sign in again first).',
  tags: ['Console account'],
  errors: [409],
  responses: {
    200: { description: 'The secret to load into an authenticator app', content: { 'application/json': { schema: TotpStartedSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const session = sessionOf(c);
  assertRecentSignIn(session.signedInAt, 'turn on two-factor authentication');
  return c.json(await startTotp(c.get('db'), c.get('config'), { id: session.userId, email: session.email }), 200);
};
