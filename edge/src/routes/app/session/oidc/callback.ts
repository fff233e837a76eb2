import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../../http/define-route.js';
import { OidcCallbackQuery, OidcRefusalSchema } from '../../../../contracts/console-oidc.js';
import { finishSignIn, type DenialReason } from '../../../../services/oidc/finish-sign-in.js';
import { bindingOf, clearedBindingCookie } from '../../../../services/oidc/binding-cookie.js';
import { openSession } from '../../../../services/console/sessions.js';
import { recordSecurityEvent } from '../../../../http/security-event.js';
import { addressBucketOf, checkLimit, enforceLimit } from '../../../../middleware/rate-limit.js';
import { refusalLocation, wantsPage } from '../../../../services/oidc/refusal-page.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/app/api/session/oidc/callback',
  permission: 'public',
  auditType: null, // recorded here: `auth.oidc.login`, `auth.oidc.linked`, `auth.oidc.denied`, `auth.login.failed`
  summary: 'Finish signing in through an identity provider',
  description: [
    'The redirect URI the identity provider sends the browser back to (register it at the provider: it is shown as `redirect_uri` on the provider in',
    '`/api/v1/admin/identity-providers`). Spends the `state` (once, 10 minutes, only in the browser holding the `edgemail_oidc` cookie), exchanges the code',
    'with the PKCE verifier and the client secret, checks the ID token (issuer, audience, authorized party, expiry, issued-at, nonce, and its signature by',
    'the provider\'s JWKS) and requires a verified email whose domain the provider allows. Then 303 to the `return_to` of the start with the',
    '`__Host-edgemail_session` cookie (`edgemail_session` on loopback http): a session with `method: oidc` that remembers its provider (it ends when the provider is disabled or deleted).',
    'The user is the one linked to this identity before; a first sign-in creates the user (email verified, member of the provider\'s default project',
    'with its default role), or links an existing user with the same email only when nothing but an identity provider lets that user in (no password,',
    'no TOTP, no passkey, no identity at another provider; docs/sso.md "Accounts"). A link started from a signed-in session (`POST /app/api/account/identities`)',
    'ends here too: the identity is linked to that account, no new session is opened, and the answer is 303 to its `return_to` (`auth.oidc.linked`).',
    'Refusals (nothing signed in, nothing linked) to a browser, whose request accepts `text/html` as a navigation does: 303 to the console\'s sign-in page `/sign-in#sso_error=<code>`',
    '(for a link: to its `return_to`, unless its session has ended), the page saying what went wrong; `<code>` is one of a fixed set (the failure reasons below, `domain`, `link_required`,',
    '`identity_taken`, `link_session`, `rate_limited`), nothing the provider or the request said. To any other caller, JSON: 401 `single sign-on failed: <reason>` for a wrong, expired, reused or foreign state, an error from the provider,',
    'a failed code exchange, an ID token failing a check, no email or an unverified one (`auth.login.failed`, detail `oidc:<reason>`);',
    '403 `<domain> may not sign in through <provider>` for an email outside the allowlist (`auth.oidc.denied`);',
    '409 `an account with this email already exists: sign in to it another way and link <provider> from your account settings` when the email belongs to an account with a password,',
    'TOTP, a passkey or another provider (`auth.oidc.denied`, detail `reason=link_required`, on that account\'s trail); for a link: 409 when the identity is linked to another',
    'account already (`reason=identity_taken`), 401 when the session that started it has ended (`reason=link_session`);',
    '429 beyond `ratelimit.oidc_per_minute` callbacks per client address.',
  ].join(' '),
  tags: ['Console session'],
  request: { query: OidcCallbackQuery },
  errors: [429],
  responses: {
    303: { description: 'Signed in (the session cookie set) or, for a link, linked: to the `return_to` path. To a browser (`Accept: text/html`), a refusal too: to `/sign-in#sso_error=<code>`', headers: { Location: { schema: { type: 'string' }, description: 'A path on this site' } } },
    401: { description: 'Single sign-on failed (the reason named)', content: { 'application/json': { schema: OidcRefusalSchema } } },
    403: { description: 'The identity\'s email domain is not allowed by the provider', content: { 'application/json': { schema: OidcRefusalSchema } } },
    409: { description: 'The email belongs to an account that must link the provider from its own session, or (a link) the identity is another account\'s', content: { 'application/json': { schema: OidcRefusalSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const page = wantsPage(c.req.header('accept'));
  const verdict = await checkLimit(c, 'oidc', addressBucketOf(c));
  if (page && verdict && !verdict.allowed) {
    c.header('Cache-Control', 'no-store');
    return c.redirect(refusalLocation({ kind: 'rate_limited' }), 303);
  }
  enforceLimit(verdict);
  const db = c.get('db');
  const config = c.get('config');
  const outcome = await finishSignIn(db, config, new URL(c.req.url), bindingOf(c));
  c.header('Set-Cookie', clearedBindingCookie(config));
  c.header('Cache-Control', 'no-store');
  const event = (type: string, status: number, detail: string, user?: { id: string | null; email: string }) => recordSecurityEvent(c, type, user ?? null, status, detail);
  if (!outcome.ok && outcome.kind === 'failed') {
    await event('auth.login.failed', 401, `oidc:${outcome.reason}${outcome.provider ? ` provider=${outcome.provider.id}` : ''}`);
    if (page) return c.redirect(refusalLocation(outcome), 303);
    return c.json({ error: `single sign-on failed: ${outcome.message}` }, 401);
  }
  if (!outcome.ok && outcome.kind === 'denied') {
    await event('auth.oidc.denied', 403, `provider=${outcome.provider.id} domain=${outcome.domain}`, { id: null, email: outcome.email });
    if (page) return c.redirect(refusalLocation(outcome), 303);
    return c.json({ error: `${outcome.domain} may not sign in through ${outcome.provider.name}` }, 403);
  }
  if (!outcome.ok) {
    const { status, error } = refusalOf(outcome.reason, outcome.provider.name);
    await event('auth.oidc.denied', status, `provider=${outcome.provider.id} reason=${outcome.reason}`, { id: outcome.user.id, email: outcome.email });
    if (page) return c.redirect(refusalLocation(outcome), 303);
    return c.json({ error }, status);
  }
  if (outcome.linked) {
    await event('auth.oidc.linked', 200, `provider=${outcome.provider.id}`, outcome.user);
    return c.redirect(outcome.returnTo, 303);
  }
  const session = await openSession(db, {
    userId: outcome.user.id, method: 'oidc', identityProviderId: outcome.provider.id,
    clientIp: c.get('clientIp'), userAgent: c.req.header('user-agent') ?? null, config,
  });
  await event('auth.oidc.login', 200, `provider=${outcome.provider.id}${outcome.user.created ? ' created' : ''}`, outcome.user);
  c.header('Set-Cookie', session.setCookie, { append: true });
  return c.redirect(outcome.returnTo, 303);
};

/** The answer to an identity the provider vouched for but this account may not take: what to do next, named. */
function refusalOf(reason: DenialReason, provider: string): { status: 401 | 409; error: string } {
  switch (reason) {
    case 'link_required':
      return { status: 409, error: `an account with this email already exists: sign in to it another way and link ${provider} from your account settings` };
    case 'identity_taken':
      return { status: 409, error: `this ${provider} identity is already linked to another account` };
    case 'link_session':
      return { status: 401, error: `the session that started linking ${provider} has ended: sign in and link it again` };
  }
}
