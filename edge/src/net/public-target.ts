// Private-target refusal for webhook URLs. A webhook is a request the
// platform makes on a tenant's behalf, so a URL pointing at loopback, the
// LAN or a cloud metadata endpoint would let a tenant probe the operator's
// network. Checked at create (syntax and DNS) and again before every delivery,
// since DNS can change in between. The gap between the last check and the
// delivery's own lookup remains (Workers cannot pin the address fetch uses);
// the check narrows what a tenant can reach, it is not a firewall.
import { nonPublicRange, parseIp } from '@edgemail/shared';
import { resolveDns } from './doh.js';

/** `addresses`: the public addresses a host name resolved to when checked (absent for a literal or when private targets are allowed), so a caller can connect to exactly those. */
export type TargetVerdict = { ok: true; addresses?: string[] } | { ok: false; problem: string; transient?: boolean };

export const WEBHOOK_URL_MAX_LENGTH = 2048;

const OK: TargetVerdict = { ok: true };
const refuse = (problem: string): TargetVerdict => ({ ok: false, problem });

/**
 * The checks that need no DNS: scheme, length, credentials, and (unless
 * private targets are allowed) loopback names, integer-written IPv4 and
 * non-public IP literals. Synchronous, for the create route's schema.
 * Problems are written to follow the field name (`url: <problem>`).
 *
 * @example checkWebhookUrlSyntax('http://10.0.0.5/hook', false)
 * // { ok: false, problem: 'host 10.0.0.5 is a private address (private)' }
 */
export function checkWebhookUrlSyntax(text: string, allowPrivate: boolean): TargetVerdict {
  if (text.length > WEBHOOK_URL_MAX_LENGTH) return refuse(`must be at most ${WEBHOOK_URL_MAX_LENGTH} characters`);
  // The URL parser silently drops tabs and newlines and trims the ends, so
  // what was stored would not be what is requested.
  if (/[\u0000-\u0020\u007f]/.test(text)) return refuse('must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('must be an absolute http or https url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return refuse('scheme must be http or https');
  if (url.username || url.password) return refuse('must not contain a user name or password');
  if (allowPrivate) return OK;

  const host = url.hostname.replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return refuse(`host ${host} is a loopback name`);
  if (isDottedQuad(url.hostname)) {
    const written = writtenHost(text);
    if (written !== url.hostname) {
      return refuse(`host ${written} is written ${ipv4Form(written)}; write the address as dotted decimal`);
    }
  }
  const literal = isDottedQuad(url.hostname) || url.hostname.startsWith('[');
  if (literal) {
    const range = nonPublicRange(url.hostname);
    if (range) return refuse(`host ${url.hostname} is a private address (${range})`);
  }
  return OK;
}

/**
 * Whether a webhook may be delivered to `url`: the syntax checks, then for a
 * host name its A and AAAA records, every one of which must be public (a name
 * with one public and one private address is refused: the client may pick
 * either). With `allowPrivate`, only scheme, length and credentials are
 * checked and nothing is looked up. `transient` marks a resolver failure: no
 * verdict on the URL, answer 503 or try again later.
 *
 * @example
 * const verdict = await checkWebhookTarget(url, { dohUrl: settings['dns.doh_url'], allowPrivate: false });
 * if (!verdict.ok) throw verdict.transient ? unavailable(`could not check url: ${verdict.problem}`) : invalid(`url: ${verdict.problem}`);
 */
export async function checkWebhookTarget(
  url: string,
  opts: { dohUrl: string; allowPrivate: boolean; timeoutMs?: number },
): Promise<TargetVerdict> {
  const syntax = checkWebhookUrlSyntax(url, opts.allowPrivate);
  if (!syntax.ok || opts.allowPrivate) return syntax;
  const hostname = new URL(url).hostname;
  if (isDottedQuad(hostname) || hostname.startsWith('[')) return OK; // a literal: checked above

  const host = hostname.replace(/\.$/, '');
  const dns = { dohUrl: opts.dohUrl, timeoutMs: opts.timeoutMs };
  const answers = await Promise.all([resolveDns(host, 'A', dns), resolveDns(host, 'AAAA', dns)]);
  const addresses = answers.flatMap((a) => (a.status === 'ok' ? a.records.map((r) => r.data) : []));
  for (const address of addresses) {
    if (!parseIp(address)) return { ok: false, problem: `resolver gave ${host} an unreadable address ${address}`, transient: true };
    const range = nonPublicRange(address);
    if (range) return refuse(`${host} resolves to ${address}, a private address (${range})`);
  }
  // Only after the private check: a private address found is a verdict even
  // when the other family's lookup failed.
  for (const a of answers) {
    if (a.status === 'error') return { ok: false, problem: `could not resolve ${host}: ${a.problem}`, transient: true };
  }
  if (!addresses.length) return refuse(`host ${host} does not resolve`);
  return { ok: true, addresses };
}

/** The URL parser's canonical IPv4 form; its `hostname` is always this for an IPv4 host. */
function isDottedQuad(hostname: string): boolean {
  return /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/**
 * The host as the text writes it, before the URL parser's rewriting: after the
 * scheme and any slashes (the parser takes backslashes and a missing `//` too),
 * past the last `@`, up to the port, path, query or fragment.
 */
function writtenHost(text: string): string {
  const afterScheme = text.slice(text.indexOf(':') + 1).replace(/^[/\\]*/, '');
  const authority = afterScheme.split(/[/\\?#]/, 1)[0]!;
  const hostPort = authority.slice(authority.lastIndexOf('@') + 1);
  return hostPort.startsWith('[') ? hostPort.slice(0, hostPort.indexOf(']') + 1) : hostPort.split(':', 1)[0]!;
}

/** How a non-canonical IPv4 host is written, for the problem text. */
function ipv4Form(written: string): string {
  const parts = written.split('.');
  const hex = (p: string) => /^0x[0-9a-f]*$/i.test(p);
  const octal = (p: string) => /^0\d+$/.test(p);
  if (parts.length === 1 && hex(written)) return 'as a hex integer';
  if (parts.length === 1 && octal(written)) return 'as an octal integer';
  if (parts.length === 1 && /^\d+$/.test(written)) return 'as an integer';
  if (parts.every((p) => hex(p) || /^\d+$/.test(p))) {
    if (parts.some(hex)) return 'with hex parts';
    if (parts.some(octal)) return 'with octal parts';
    if (parts.length < 4) return 'in shortened form';
  }
  return 'in a non-canonical form';
}
