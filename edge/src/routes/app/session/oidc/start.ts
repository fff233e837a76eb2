import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, ErrorSchema } from '../../../../http/define-route.js';
import { OidcStartParams, OidcStartQuery } from '../../../../contracts/console-oidc.js';
import { ApiError, notFound } from '../../../../http/errors.js';
import { startSignIn } from '../../../../services/oidc/start-sign-in.js';
import { bindingCookie } from '../../../../services/oidc/binding-cookie.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../../middleware/rate-limit.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/app/api/session/oidc/{provider_id}/start',
  permission: 'public',
  auditType: null,
  summary: 'Start signing in through an identity provider',
  description: [
    'Redirects the browser (302) to the provider\'s authorization endpoint: the authorization code flow with PKCE (S256), a fresh `state` and `nonce`,',
    'scopes `openid email profile` and the redirect URI `{server.public_url}/app/api/session/oidc/callback` (docs/sso.md).',
    'Sets the `edgemail_oidc` cookie (HttpOnly, SameSite=Lax, 10 minutes) that binds the callback to this browser. The sign-in must finish within 10 minutes.',
    'Navigate to it (a link or `location.href`), do not fetch it.',
    'Refusals: 404 for an unknown or disabled provider; 400 for a `return_to` that is not a path on this site; 502 when the provider does not answer discovery;',
    '429 beyond `ratelimit.login_per_minute` per client address.',
  ].join(' '),
  tags: ['Console session'],
  request: { params: OidcStartParams, query: OidcStartQuery },
  errors: [404, 429],
  responses: {
    302: { description: 'To the identity provider; the `edgemail_oidc` binding cookie is set', headers: { Location: { schema: { type: 'string' }, description: 'The provider\'s authorization URL' } } },
    502: { description: 'The identity provider did not answer discovery (named)', content: { 'application/json': { schema: ErrorSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  enforceLimit(await checkLimit(c, 'login', addressBucketOf(c)));
  const { provider_id } = c.req.valid('param');
  const { return_to } = c.req.valid('query');
  const config = c.get('config');
  const started = await startSignIn(c.get('db'), config, provider_id, return_to ?? '/');
  if (!started.ok) throw started.status === 404 ? notFound(started.error) : new ApiError(502, started.error);
  c.header('Set-Cookie', bindingCookie(config, started.binding));
  c.header('Cache-Control', 'no-store');
  return c.redirect(started.authorizationUrl, 302);
};
