import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { PasswordResetCompleteSchema } from '../../../contracts/member.js';
import { completePasswordReset } from '../../../services/password-resets/complete.js';
import { recordSecurityEvent } from '../../../http/security-event.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../middleware/rate-limit.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/app/api/password-reset/complete',
  permission: 'public',
  auditType: null, // recorded here: `auth.password_reset.completed` in the user's security trail
  summary: 'Set a new password with a reset link',
  description: [
    'Takes the `token` of the reset link and the new `password` (10 to 128 characters, not the address). It sets the password, clears the sign-in lockout count,',
    'signs out every session of the account, spends every other pending reset link of it, and counts the address as verified. Then sign in with `POST /app/api/session`.',
    'An unknown, expired or already used token: 400 `invalid, expired or already used password reset token`, and nothing changes; a password that breaks the rule: 400 naming `password`, nothing changes (the link still works).',
    'Counted against `ratelimit.login_per_minute` per client address (429 beyond). Written to the user\'s security trail as `auth.password_reset.completed`.',
  ].join(' '),
  tags: ['Console people'],
  security: [],
  request: { body: { required: true, content: { 'application/json': { schema: PasswordResetCompleteSchema } } } },
  responses: { 204: { description: 'The password is set; every session of the account is signed out' } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  enforceLimit(await checkLimit(c, 'login', addressBucketOf(c)));
  const db = c.get('db');
  const { userId, email } = await completePasswordReset(db, c.req.valid('json'));
  await recordSecurityEvent(c, 'auth.password_reset.completed', { id: userId, email }, 204);
  return c.body(null, 204);
};
