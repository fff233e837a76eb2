import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { TotpDisableBody } from '../../../contracts/console-session.js';
import { disableTotp } from '../../../services/console/totp.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../middleware/rate-limit.js';
import { sessionOf } from '../session/session-of.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'delete',
  path: '/app/api/account/totp',
  permission: 'session',
  auditType: 'auth.2fa.disabled',
  summary: 'Turn off two-factor authentication',
  description: 'Proven by the account password or a current code (one of them, in the body); the secret and the recovery codes are deleted. 403 for a wrong password or code, 409 when it is not on; attempts count against `ratelimit.login_per_minute` of the client address. Each wrong password or code also counts toward the account\'s sign-in lockout (ten lock password sign-in for 15 minutes, as at `POST /app/api/session`); while it holds, this route is refused too, a right password or code included: 403 `too many wrong passwords or codes: this account is locked …`. A right password clears the count.',
  tags: ['Console account'],
  errors: [409],
  request: { body: { content: { 'application/json': { schema: TotpDisableBody } }, required: true } },
  responses: { 204: { description: 'Two-factor authentication is off' } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  enforceLimit(await checkLimit(c, 'login', addressBucketOf(c)));
  await disableTotp(c.get('db'), c.get('config'), sessionOf(c).userId, c.req.valid('json'));
  return c.body(null, 204);
};
