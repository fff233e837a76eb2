// The first leg of single sign-on (docs/sso.md "The sign-in"): the
// authorization code flow with PKCE (S256), state and nonce, all fresh per
// sign-in. The answer is the provider's authorization URL and the browser
// binding value for the cookie. Linking a provider to a signed-in account
// starts the same way, with the account named in the pending sign-in.
import * as oauth from 'oauth4webapi';
import { and, eq } from 'drizzle-orm';
import { identityProviders } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { redirectUriOf } from '../identity-providers/redirect-uri.js';
import { discover } from './discovery.js';
import { storePendingSignIn, type PendingSignIn } from './pending-sign-in.js';

export const SCOPES = 'openid email profile';

/** An enabled provider by id, or undefined. */
export async function enabledProvider(db: Db, id: string) {
  const [row] = await db.select().from(identityProviders)
    .where(and(eq(identityProviders.id, id), eq(identityProviders.enabled, true)));
  return row;
}

export type StartOutcome =
  | { ok: true; authorizationUrl: string; binding: string }
  | { ok: false; status: 404 | 502; error: string };

export async function startSignIn(db: Db, config: Config, providerId: string, returnTo: string, link?: PendingSignIn['link']): Promise<StartOutcome> {
  const provider = await enabledProvider(db, providerId);
  if (!provider) return { ok: false, status: 404, error: 'identity provider not found or not enabled' };
  let server: oauth.AuthorizationServer;
  try {
    server = await discover(provider.issuer);
  } catch (e) {
    return { ok: false, status: 502, error: `identity provider ${provider.name} did not answer discovery: ${e instanceof Error ? e.message : String(e)}` };
  }
  const state = oauth.generateRandomState();
  const nonce = oauth.generateRandomNonce();
  const codeVerifier = oauth.generateRandomCodeVerifier();
  const binding = oauth.generateRandomState();
  await storePendingSignIn(db, state, binding, { providerId, nonce, codeVerifier, returnTo, link });

  const url = new URL(server.authorization_endpoint!);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', provider.clientId);
  url.searchParams.set('redirect_uri', redirectUriOf(config));
  url.searchParams.set('scope', SCOPES);
  url.searchParams.set('state', state);
  url.searchParams.set('nonce', nonce);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(codeVerifier));
  url.searchParams.set('code_challenge_method', 'S256');
  return { ok: true, authorizationUrl: url.href, binding };
}
