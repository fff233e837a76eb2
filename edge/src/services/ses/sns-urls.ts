// Which URLs an SNS message may make the edge fetch: its SigningCertURL (the
// key its signature is checked with) and a confirmation's SubscribeURL. Both
// come from the request body, so both are an attacker's input: only https on
// an SNS regional host (`sns.<region>.amazonaws.com`, China's
// `.amazonaws.com.cn`), or a prefix of `ses.extra_sns_url_prefixes` (tests,
// private mirrors; empty in production).

const SNS_HOST = /^sns\.[a-z]{2}(-[a-z]+)+-\d\.amazonaws\.com(\.cn)?$/;

export type SnsUrlKind = 'SigningCertURL' | 'SubscribeURL';

/**
 * The URL to fetch, or the problem with it. A certificate URL must also have
 * a `.pem` path (the AWS SDKs' validators ask the same).
 * @example snsUrl('https://sns.us-east-1.amazonaws.com/SimpleNotificationService-x.pem', 'SigningCertURL', []) // { url }
 */
export function snsUrl(text: string, kind: SnsUrlKind, extraPrefixes: readonly string[]): { url: URL } | { problem: string } {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { problem: `${kind} is not a URL` };
  }
  const pemProblem = kind === 'SigningCertURL' && !url.pathname.endsWith('.pem') ? `${kind} must name a .pem file` : null;
  // A listed prefix is compared with the URL as parsed, so `http://127.0.0.1:1/@evil/` tricks nothing.
  if (extraPrefixes.some((prefix) => url.href.startsWith(prefix))) return pemProblem ? { problem: pemProblem } : { url };
  if (url.protocol !== 'https:') return { problem: `${kind} must be https` };
  if (url.username || url.password || url.port || !SNS_HOST.test(url.hostname)) {
    return { problem: `${kind} must be on an SNS host (sns.<region>.amazonaws.com), not ${url.host}` };
  }
  return pemProblem ? { problem: pemProblem } : { url };
}
