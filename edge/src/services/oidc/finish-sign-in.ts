// The callback leg of single sign-on (docs/sso.md "The sign-in"): the state
// is spent and matched to this browser, the code exchanged at the token
// endpoint with the PKCE verifier and the client secret, and the ID token
// checked by oauth4webapi (iss, aud, azp, exp, iat, nonce) and its signature
// by the provider's published JWKS. Then the identity: a verified email in a
// domain the provider allows. Then whose it is (provision-user.ts): a sign-in
// finds or makes its user, or is refused when the email belongs to an account
// that must link the provider itself; a link started from an account's
// session links it to that account. The caller opens the session (not for a
// link) and writes the audit event from the outcome.
import * as oauth from 'oauth4webapi';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { openClientSecret } from '../identity-providers/client-secret.js';
import { redirectUriOf } from '../identity-providers/redirect-uri.js';
import { discover, requestOptions } from './discovery.js';
import { takePendingSignIn } from './pending-sign-in.js';
import { enabledProvider } from './start-sign-in.js';
import { linkIdentity, provisionUser, type SignedInIdentity } from './provision-user.js';

/** What failed, as the security event's detail names it (`oidc:<reason>`). */
export type OidcFailure =
  | 'state' | 'provider' | 'provider_error' | 'discovery' | 'token' | 'id_token'
  | 'iss' | 'aud' | 'azp' | 'nonce' | 'exp' | 'iat' | 'signature' | 'email_missing' | 'email_unverified';

type Provider = { id: string; name: string };

/** Why an identity the provider vouched for is still refused here (`auth.oidc.denied`, detail `reason=<why>`). */
export type DenialReason = 'link_required' | 'link_session' | 'identity_taken';

export type FinishOutcome =
  | { ok: true; linked: false; user: { id: string; email: string; created: boolean }; provider: Provider; returnTo: string }
  /** A link started from the account's session: no new session. */
  | { ok: true; linked: true; user: { id: string; email: string }; provider: Provider; returnTo: string }
  /** `linkReturnTo` (every refusal): where a link started from a session was to end, to show the refusal there. */
  | { ok: false; kind: 'failed'; reason: OidcFailure; message: string; provider?: Provider; linkReturnTo?: string }
  | { ok: false; kind: 'denied'; email: string; domain: string; provider: Provider; linkReturnTo?: string }
  /** `user`: the account the refusal is about (its security trail shows it). */
  | { ok: false; kind: 'refused'; reason: DenialReason; email: string; user: { id: string; email: string }; provider: Provider; linkReturnTo?: string };

// One JWKS cache per issuer and isolate: a sign-in costs no JWKS fetch while
// the keys are fresh; an unknown `kid` (a rotation) fetches them again.
const jwksCaches = new Map<string, oauth.JWKSCacheInput>();

function failureOf(e: unknown): OidcFailure {
  if (e instanceof oauth.AuthorizationResponseError) return 'provider_error';
  if (e instanceof oauth.ResponseBodyError) return 'token';
  if (e instanceof oauth.OperationProcessingError) {
    const cause = e.cause as { claim?: unknown } | undefined;
    const claim = typeof cause?.claim === 'string' ? cause.claim : undefined;
    if (claim === 'iss' || claim === 'aud' || claim === 'azp' || claim === 'nonce' || claim === 'exp' || claim === 'iat') return claim;
    if (/signature/i.test(e.message) || e.code === oauth.KEY_SELECTION) return 'signature';
  }
  return 'id_token';
}

// The allowlist holds ASCII (A-label) names; an IdP may send a U-label domain.
function asciiDomain(domain: string): string {
  const text = `http://${domain}/`;
  return URL.canParse(text) ? new URL(text).hostname : domain.toLowerCase();
}

const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** The email and name of the identity: from the ID token, or from UserInfo when the ID token leaves them out. */
async function claimsOf(server: oauth.AuthorizationServer, client: oauth.Client, issuer: string, tokens: oauth.TokenEndpointResponse, idToken: oauth.IDToken) {
  if (typeof idToken.email === 'string' || !server.userinfo_endpoint) return idToken;
  const response = await oauth.userInfoRequest(server, client, tokens.access_token, requestOptions(issuer));
  const info = await oauth.processUserInfoResponse(server, client, idToken.sub, response);
  return { ...idToken, ...info, sub: idToken.sub };
}

export async function finishSignIn(db: Db, config: Config, callbackUrl: URL, binding: string | undefined): Promise<FinishOutcome> {
  const state = callbackUrl.searchParams.get('state');
  const pending = state ? await takePendingSignIn(db, state, binding) : null;
  if (!pending) return { ok: false, kind: 'failed', reason: 'state', message: 'unknown, expired or already used sign-in (state), or one started in another browser' };
  const row = await enabledProvider(db, pending.providerId);
  const linkReturnTo = pending.link ? pending.returnTo : undefined;
  if (!row) return { ok: false, kind: 'failed', reason: 'provider', message: 'the identity provider was removed or disabled during the sign-in', linkReturnTo };
  const provider = { id: row.id, name: row.name };
  const fail = (reason: OidcFailure, message: string): FinishOutcome => ({ ok: false, kind: 'failed', reason, message, provider, linkReturnTo });

  let server: oauth.AuthorizationServer;
  try {
    server = await discover(row.issuer);
  } catch (e) {
    return fail('discovery', `discovery failed: ${messageOf(e)}`);
  }
  const client: oauth.Client = { client_id: row.clientId };
  const secret = await openClientSecret(config, row.clientSecretSealed);
  const methods = server.token_endpoint_auth_methods_supported;
  const auth = !methods || methods.includes('client_secret_basic') ? oauth.ClientSecretBasic(secret) : oauth.ClientSecretPost(secret);

  let tokens: oauth.TokenEndpointResponse;
  let idToken: oauth.IDToken;
  try {
    const params = oauth.validateAuthResponse(server, client, callbackUrl, state!);
    const response = await oauth.authorizationCodeGrantRequest(server, client, auth, params, redirectUriOf(config), pending.codeVerifier, requestOptions(row.issuer));
    tokens = await oauth.processAuthorizationCodeResponse(server, client, response, { expectedNonce: pending.nonce, requireIdToken: true });
    let cache = jwksCaches.get(row.issuer);
    if (!cache) jwksCaches.set(row.issuer, cache = {});
    await oauth.validateApplicationLevelSignature(server, response, { ...requestOptions(row.issuer), [oauth.jwksCache]: cache });
    idToken = oauth.getValidatedIdTokenClaims(tokens)!;
  } catch (e) {
    const reason = failureOf(e);
    return fail(reason, reason === 'provider_error' && e instanceof oauth.AuthorizationResponseError
      ? `the identity provider answered ${e.error}${e.error_description ? `: ${e.error_description}` : ''}`
      : `the identity provider's answer was refused (${reason}): ${messageOf(e)}`);
  }

  let claims: Record<string, unknown>;
  try {
    claims = await claimsOf(server, client, row.issuer, tokens, idToken);
  } catch (e) {
    return fail('token', `UserInfo failed: ${messageOf(e)}`);
  }
  const email = typeof claims.email === 'string' ? claims.email.trim() : '';
  if (!/^[^@\s]+@[^@\s]+$/.test(email) || email.length > 320) return fail('email_missing', 'the identity provider gave no email address');
  if (claims.email_verified !== true) return fail('email_unverified', `the identity provider has not verified ${email}`);
  const domain = asciiDomain(email.slice(email.lastIndexOf('@') + 1));
  if (!row.allowedDomains.includes(domain)) return { ok: false, kind: 'denied', email, domain, provider, linkReturnTo };

  const identity: SignedInIdentity = {
    providerId: row.id, subject: idToken.sub, email,
    name: typeof claims.name === 'string' ? claims.name.slice(0, 200) : '',
    defaultProjectId: row.defaultProjectId, defaultRole: row.defaultRole,
  };
  if (pending.link) {
    const linked = await linkIdentity(db, identity, pending.link);
    if (!linked.ok) return { ok: false, kind: 'refused', reason: linked.reason, email, user: { id: pending.link.userId, email }, provider, linkReturnTo };
    return { ok: true, linked: true, user: linked.user, provider, returnTo: pending.returnTo };
  }
  const found = await provisionUser(db, identity);
  if (!found.ok) return { ok: false, kind: 'refused', reason: found.reason, email, user: found.user, provider };
  return { ok: true, linked: false, user: found.user, provider, returnTo: pending.returnTo };
}
