import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { SignedInSchema } from '../../../../contracts/console-session.js';
import { PasskeySignInBody } from '../../../../contracts/console-passkeys.js';
import { signInWithPasskey } from '../../../../services/console/passkeys/sign-in.js';
import { openSession } from '../../../../services/console/sessions.js';
import { presentSignedIn } from '../../../../services/console/who-am-i.js';
import { recordSecurityEvent } from '../../../../http/security-event.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../../middleware/rate-limit.js';
import type { AppEnv } from '../../../../env.js';

const REFUSED = 'passkey not accepted: ask for new options and try again';

export const route = defineRoute({
  method: 'post',
  path: '/app/api/session/passkey',
  permission: 'public',
  auditType: null, // recorded here: `auth.login.succeeded` / `auth.login.failed`, failures included
  summary: 'Sign in with a passkey',
  description: [
    'Verifies the answer of `navigator.credentials.get()` to `POST /app/api/session/passkey/options` and opens a browser session as the password sign-in does',
    '(200 `{user, session}` with `session.method: passkey`, and the `__Host-edgemail_session` cookie (`edgemail_session` on loopback http)). The passkey is the whole sign-in: no password, no TOTP code',
    '(the authenticator verified the user). Not subject to the password lockout: a locked account signs in with its passkey.',
    `Refusals: 401 \`${REFUSED}\` alike for an unknown, expired or already used challenge, an unknown or deleted passkey, a foreign origin or rpID,`,
    'a user not verified, a bad signature and a signature counter that did not move forward (the security trail names which);',
    '429 beyond `ratelimit.login_per_minute` attempts per client address (options included); 403 for a foreign `Origin` header.',
  ].join(' '),
  tags: ['Console session'],
  request: { body: { content: { 'application/json': { schema: PasskeySignInBody } }, required: true } },
  responses: {
    200: { description: 'Signed in; the session cookie is set', content: { 'application/json': { schema: SignedInSchema } } },
    401: { description: `Not signed in: \`${REFUSED}\``, content: { 'application/json': { schema: z.object({ error: z.string() }).openapi('PasskeySignInRefused') } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  enforceLimit(await checkLimit(c, 'login', addressBucketOf(c)));
  const { response } = c.req.valid('json');
  const db = c.get('db');
  const config = c.get('config');
  const outcome = await signInWithPasskey(db, config, response);
  const event = (type: string, status: number, detail: string) => recordSecurityEvent(c, type, outcome.user, status, detail);
  if (!outcome.ok) {
    await event('auth.login.failed', 401, `passkey:${outcome.reason}`);
    return c.json({ error: REFUSED }, 401);
  }
  const session = await openSession(db, {
    userId: outcome.user.id, method: 'passkey', clientIp: c.get('clientIp'), userAgent: c.req.header('user-agent') ?? null, config,
  });
  await event('auth.login.succeeded', 200, 'passkey');
  return c.json(await presentSignedIn(db, config, session.id), 200, { 'Set-Cookie': session.setCookie });
};
