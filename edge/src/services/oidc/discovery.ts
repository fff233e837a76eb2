// The provider's metadata (OpenID Connect Discovery), fetched from
// `<issuer>/.well-known/openid-configuration` and checked by oauth4webapi
// (its `issuer` must equal ours exactly). Kept per isolate for five minutes, so
// a sign-in costs no extra round trip; a provider that changes its endpoints is
// seen within that time.
import * as oauth from 'oauth4webapi';
import { isLoopbackHttp } from './issuer.js';

const TTL_MS = 5 * 60_000;
/** How long the provider may take to answer one request (discovery, token, JWKS). */
export const PROVIDER_TIMEOUT_MS = 5_000;

const cache = new Map<string, { server: oauth.AuthorizationServer; until: number }>();

/** Options for every request to this issuer: a timeout, and http only on loopback. */
export function requestOptions(issuer: string): { signal: AbortSignal; [oauth.allowInsecureRequests]: boolean } {
  return { signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS), [oauth.allowInsecureRequests]: isLoopbackHttp(issuer) };
}

/** The checked metadata of `issuer`; throws an Error naming what failed. */
export async function discover(issuer: string): Promise<oauth.AuthorizationServer> {
  const hit = cache.get(issuer);
  if (hit && hit.until > Date.now()) return hit.server;
  const url = new URL(issuer);
  const response = await oauth.discoveryRequest(url, { ...requestOptions(issuer), algorithm: 'oidc' });
  const server = await oauth.processDiscoveryResponse(url, response);
  if (!server.authorization_endpoint || !server.token_endpoint || !server.jwks_uri) {
    throw new Error('the provider\'s metadata lacks authorization_endpoint, token_endpoint or jwks_uri');
  }
  cache.set(issuer, { server, until: Date.now() + TTL_MS });
  return server;
}

/** Why discovery of `issuer` failed, in words an operator can act on, or null when it works. */
export async function discoveryProblem(issuer: string): Promise<string | null> {
  try {
    await discover(issuer);
    return null;
  } catch (e) {
    return `discovery of ${issuer} failed: ${e instanceof Error ? e.message : String(e)}`;
  }
}
