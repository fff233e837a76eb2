import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, ErrorSchema } from '../../../../http/define-route.js';
import { LinkIdentitySchema, LinkStartedSchema } from '../../../../contracts/console-identities.js';
import { ApiError, notFound } from '../../../../http/errors.js';
import { startSignIn } from '../../../../services/oidc/start-sign-in.js';
import { bindingCookie } from '../../../../services/oidc/binding-cookie.js';
import { assertRecentSignIn } from '../../../../services/console/recent-sign-in.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../../middleware/rate-limit.js';
import { sessionOf } from '../../session/session-of.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/app/api/account/identities',
  permission: 'session',
  auditType: null, // nothing is linked yet: the callback records `auth.oidc.linked` (or `auth.oidc.denied`)
  summary: 'Start linking an identity provider to your account',
  description: [
    'The one way to add single sign-on to an account that has a password, TOTP, a passkey or another provider (docs/sso.md "Accounts"): a sign-in through',
    'the provider would otherwise be refused for its email. Answers 200 `{authorization_url}` and sets the `edgemail_oidc` binding cookie (as',
    '`GET /app/api/session/oidc/{provider_id}/start` does); navigate the browser to the URL. The provider sends it back to the usual callback, which links',
    'the identity to THIS account (whatever its email, as long as the provider verified it and allows its domain), opens no new session and answers 303 to',
    '`return_to`; it fails if this session has ended meanwhile, or if the identity is linked to another account. Within 10 minutes.',
    'Refusals: 403 when the session signed in more than 15 minutes ago (sign in again first); 404 for an unknown or disabled provider; 400 for a',
    '`return_to` that is not a path on this site; 502 when the provider does not answer discovery; 429 beyond `ratelimit.login_per_minute` per client address.',
  ].join(' '),
  tags: ['Console account'],
  request: { body: { required: true, content: { 'application/json': { schema: LinkIdentitySchema } } } },
  errors: [404, 429],
  responses: {
    200: { description: 'The provider\'s authorization URL; the `edgemail_oidc` binding cookie is set', content: { 'application/json': { schema: LinkStartedSchema } } },
    502: { description: 'The identity provider did not answer discovery (named)', content: { 'application/json': { schema: ErrorSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  enforceLimit(await checkLimit(c, 'login', addressBucketOf(c)));
  const session = sessionOf(c);
  assertRecentSignIn(session.signedInAt, 'link an identity provider');
  const { provider_id, return_to } = c.req.valid('json');
  const config = c.get('config');
  const started = await startSignIn(c.get('db'), config, provider_id, return_to ?? '/', { userId: session.userId, sessionId: session.id });
  if (!started.ok) throw started.status === 404 ? notFound(started.error) : new ApiError(502, started.error);
  c.header('Set-Cookie', bindingCookie(config, started.binding));
  c.header('Cache-Control', 'no-store');
  return c.json({ authorization_url: started.authorizationUrl }, 200);
};
