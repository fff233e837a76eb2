import { z, type RouteHandler } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { defineRoute } from '../../../http/define-route.js';
import { SignedInSchema, SignInBody } from '../../../contracts/console-session.js';
import { signInWithPassword, type FailedLeg } from '../../../services/console/sign-in.js';
import { openSession } from '../../../services/console/sessions.js';
import { presentSignedIn } from '../../../services/console/who-am-i.js';
import { recordSecurityEvent } from '../../../http/security-event.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../middleware/rate-limit.js';
import { loggableError } from '../../../db/errors.js';
import type { AppEnv } from '../../../env.js';

const INVALID = 'invalid email or password';
// The answer to each failed leg: the password leg's three causes share one.
const REFUSAL: Record<FailedLeg, { error: string; two_factor_required?: true }> = {
  password: { error: INVALID },
  locked: { error: INVALID },
  totp_required: { error: 'two-factor code required: repeat the sign-in with totp_code (or a recovery_code)', two_factor_required: true },
  totp: { error: 'invalid two-factor code', two_factor_required: true },
  recovery_code: { error: 'invalid recovery code', two_factor_required: true },
};

export const route = defineRoute({
  method: 'post',
  path: '/app/api/session',
  permission: 'public',
  auditType: null, // recorded here: `auth.login.succeeded` / `auth.login.failed`, failures included
  summary: 'Sign in with email and password',
  description: [
    'Opens a browser session: answers the user and the session and sets the `__Host-edgemail_session` cookie (`edgemail_session` on loopback http)',
    '(`HttpOnly; SameSite=Strict; Secure`, see docs/console.md). With two-factor authentication on, send',
    '`totp_code` (or a `recovery_code`) in the same call; without one the answer is 401 with',
    '`two_factor_required: true`, and the client repeats the call with it.',
    'Refusals: 401 `invalid email or password` alike for an unknown email, a wrong password and a locked',
    'account (ten consecutive failed sign-ins lock password sign-in for 15 minutes, from every address);',
    '401 naming the second factor when it is wrong or missing; 429 beyond `ratelimit.login_per_minute`',
    'attempts per client address; 403 for a foreign `Origin`. Every attempt is in the security trail.',
  ].join(' '),
  tags: ['Console session'],
  request: { body: { content: { 'application/json': { schema: SignInBody } }, required: true } },
  responses: {
    200: { description: 'Signed in; the session cookie is set', content: { 'application/json': { schema: SignedInSchema } } },
    401: {
      description: 'Not signed in: `invalid email or password` (unknown email, wrong password or locked account, indistinguishable), or the second factor is missing or wrong (`two_factor_required: true`)',
      content: { 'application/json': { schema: z.object({ error: z.string(), two_factor_required: z.boolean().optional() }).openapi('SignInRefused') } },
    },
  },
});

function record(c: Context<AppEnv>, type: string, user: { id: string; email: string } | null, email: string, status: number, detail: string) {
  return recordSecurityEvent(c, type, user ?? { id: null, email: email.toLowerCase() }, status, detail);
}

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  enforceLimit(await checkLimit(c, 'login', addressBucketOf(c)));
  const input = c.req.valid('json');
  const db = c.get('db');
  const config = c.get('config');
  const outcome = await signInWithPassword(db, config, input);
  if (!outcome.ok) {
    await record(c, 'auth.login.failed', outcome.user, input.email, 401, outcome.leg);
    return c.json(REFUSAL[outcome.leg], 401);
  }
  const session = await openSession(db, {
    userId: outcome.user.id, method: 'password', clientIp: c.get('clientIp'), userAgent: c.req.header('user-agent') ?? null, config,
  });
  await record(c, 'auth.login.succeeded', outcome.user, input.email, 200, 'password');
  if (outcome.rehash) c.executionCtx.waitUntil(outcome.rehash().catch((e: unknown) => console.error('password rehash failed', loggableError(e))));
  return c.json(await presentSignedIn(db, config, session.id), 200, { 'Set-Cookie': session.setCookie });
};
