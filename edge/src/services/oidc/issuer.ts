// Which issuer URLs an identity provider may have (docs/sso.md "Identity
// providers"). OpenID Connect requires https; plain http is allowed only on
// loopback, for a provider on the developer's own machine (a deployed Worker
// cannot reach loopback anyway). The issuer is compared byte for byte with
// the `iss` of discovery and of every ID token, so it is kept as written.
import { parseIp } from '@edgemail/shared';

const LOOPBACK_NAMES = new Set(['localhost']);

const parseUrl = (text: string): URL | null => (URL.canParse(text) ? new URL(text) : null);

function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (LOOPBACK_NAMES.has(host) || host.endsWith('.localhost')) return true;
  const ip = parseIp(host);
  return ip !== null && ip.range() === 'loopback';
}

/** True when requests to this issuer may go over plain http (loopback only). */
export function isLoopbackHttp(issuer: string): boolean {
  const url = parseUrl(issuer);
  return url?.protocol === 'http:' && isLoopbackHost(url.hostname);
}

/** Why `text` cannot be an issuer, or null when it can. */
export function issuerProblem(text: string): string | null {
  const url = parseUrl(text);
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return 'issuer must be an https URL';
  if (url.protocol === 'http:' && !isLoopbackHost(url.hostname)) return 'issuer must be an https URL (http is allowed only on loopback)';
  if (url.username || url.password) return 'issuer must not carry a user name or password';
  if (url.search || url.hash) return 'issuer must not have a query or fragment';
  return null;
}
