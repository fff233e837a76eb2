import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { RecoveryCodesSchema, TotpConfirmBody } from '../../../contracts/console-session.js';
import { confirmTotp } from '../../../services/console/totp.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../middleware/rate-limit.js';
import { sessionOf } from '../session/session-of.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/app/api/account/totp/confirm',
  permission: 'session',
  auditType: 'auth.2fa.enabled',
  summary: 'Turn on two-factor authentication',
  description: 'Confirms the started secret with a current code: from now on password sign-in asks for a code. Answers ten single-use recovery codes, shown this once (earlier ones are void). 400 for a wrong or reused code, 409 when no setup was started or it is on already; attempts count against `ratelimit.login_per_minute` of the client address.',
  tags: ['Console account'],
  errors: [409],
  request: { body: { content: { 'application/json': { schema: TotpConfirmBody } }, required: true } },
  responses: {
    200: { description: 'Two-factor authentication is on', content: { 'application/json': { schema: RecoveryCodesSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  enforceLimit(await checkLimit(c, 'login', addressBucketOf(c)));
  const codes = await confirmTotp(c.get('db'), c.get('config'), sessionOf(c).userId, c.req.valid('json').code);
  return c.json({ recovery_codes: codes }, 200);
};
