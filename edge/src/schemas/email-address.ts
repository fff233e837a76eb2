// Mail addresses as suppression lists and sender filters compare them: the
// bare address, lower case.
import { normalizeDomainName } from './domain-name.js';

// RFC 5322 atext, plus any non-ASCII character (RFC 6531 local parts).
const ATOM = /^[a-z0-9!#$%&'*+/=?^_`{|}~\u0080-\u{10ffff}-]+$/u;
const MAX_ADDRESS = 254;
const MAX_LOCAL = 64;

/**
 * The bare, lower-cased address of `ann@example.org`, `<ann@example.org>` or
 * `Ann <ann@example.org>`, or the problem with it. The local part is a dot-atom
 * (no quoted local parts); the domain a DNS name as `normalizeDomainName`
 * accepts it (punycode for an internationalised domain).
 *
 * @example normalizeAddress('Ann <Ann@Example.org>') // { address: 'ann@example.org' }
 */
export function normalizeAddress(input: string): { address: string } | { problem: string } {
  let text = input.trim();
  const bracketed = /^(?:[^<>]*)<([^<>]*)>$/.exec(text);
  if (bracketed) text = bracketed[1]!.trim();
  // eslint-disable-next-line no-control-regex
  if (/[\s\x00-\x1f\x7f<>]/.test(text)) return { problem: 'must be an email address' };
  const at = text.lastIndexOf('@');
  if (at <= 0 || at === text.length - 1) return { problem: 'must be an email address (local@domain)' };
  const local = text.slice(0, at).toLowerCase();
  if (new TextEncoder().encode(local).length > MAX_LOCAL) return { problem: `local part must be at most ${MAX_LOCAL} octets` };
  if (local.split('.').some((atom) => !ATOM.test(atom))) return { problem: 'must be an email address: the local part is not a dot-atom' };
  const domain = normalizeDomainName(text.slice(at + 1));
  if ('problem' in domain) return { problem: `domain ${domain.problem}` };
  const address = `${local}@${domain.name}`;
  if (new TextEncoder().encode(address).length > MAX_ADDRESS) return { problem: `must be at most ${MAX_ADDRESS} octets` };
  return { address };
}
