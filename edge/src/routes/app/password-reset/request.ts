import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { PasswordResetRequestSchema } from '../../../contracts/member.js';
import { requestPasswordReset } from '../../../services/password-resets/request.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../middleware/rate-limit.js';
import { loggableError } from '../../../db/errors.js';
import type { AppEnv } from '../../../env.js';

const ANSWER = { status: 'accepted', message: 'if an account has this address, a password reset link is on its way' } as const;

export const route = defineRoute({
  method: 'post',
  path: '/app/api/password-reset',
  permission: 'public',
  auditType: null,
  summary: 'Ask for a password reset link',
  description: [
    'Always answers the same 202, whether or not an account has `email`, and before looking (no account enumeration, by answer or by time); only a malformed `email` is 400.',
    'When one has it, a single-use link (`…/app/password-reset#token=<token>`) is mailed to it, valid for `console.password_reset_ttl` (1 hour by default); at most one mail a minute per account.',
    'Counted against `ratelimit.login_per_minute` per client address (429 beyond). No credential.',
  ].join(' '),
  tags: ['Console people'],
  security: [],
  request: { body: { required: true, content: { 'application/json': { schema: PasswordResetRequestSchema } } } },
  responses: {
    202: {
      description: 'Taken: the same answer for every address',
      content: { 'application/json': { schema: z.object({ status: z.literal('accepted'), message: z.string() }).openapi('PasswordResetAccepted') } },
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  enforceLimit(await checkLimit(c, 'login', addressBucketOf(c)));
  // After the answer: how long the look-up and the mail take says nothing to the caller.
  c.executionCtx.waitUntil(requestPasswordReset(c.get('db'), c.get('config'), c.req.valid('json').email)
    .catch((e: unknown) => console.error('password reset request failed', loggableError(e))));
  return c.json(ANSWER, 202);
};
