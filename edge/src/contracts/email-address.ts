// Mail addresses: exactly one mailbox parsed from what a client wrote (RFC
// 5322 `name-addr` or `addr-spec`, never a list or group), the header form we
// compose from its parts, and the bare lower-case address that suppression
// lists and sender filters compare.
import { splitAddress } from '@edgemail/shared';
import { normalizeDomainName } from './domain-name.js';

// RFC 5322 atext, plus any non-ASCII character (RFC 6531 local parts).
const ATOM = /^[a-z0-9!#$%&'*+/=?^_`{|}~\u0080-\u{10ffff}-]+$/u;
const MAX_ADDRESS = 254;
const MAX_LOCAL = 64;

/**
 * The bare, lower-cased address of `ann@example.org`, `<ann@example.org>` or
 * `Ann <ann@example.org>` (exactly one mailbox, as `parseOneMailbox` reads
 * it), or the problem with it. The local part is a dot-atom
 * (no quoted local parts); the domain a DNS name as `normalizeDomainName`
 * accepts it (punycode for an internationalised domain).
 *
 * @example normalizeAddress('Ann <Ann@Example.org>') // { address: 'ann@example.org' }
 */
export function normalizeAddress(input: string): { address: string } | { problem: string } {
  const mailbox = parseOneMailbox(input);
  if ('problem' in mailbox) return mailbox;
  const text = mailbox.addrSpec;
  // eslint-disable-next-line no-control-regex
  if (/[\s\x00-\x1f\x7f<>]/.test(text)) return { problem: 'must be an email address' };
  const parts = splitAddress(text);
  if (!parts?.local || !parts.domain) return { problem: 'must be an email address (local@domain)' };
  const local = parts.local.toLowerCase();
  if (new TextEncoder().encode(local).length > MAX_LOCAL) return { problem: `local part must be at most ${MAX_LOCAL} octets` };
  if (local.split('.').some((atom) => !ATOM.test(atom))) return { problem: 'must be an email address: the local part is not a dot-atom' };
  const domain = normalizeDomainName(parts.domain);
  if ('problem' in domain) return { problem: `domain ${domain.problem}` };
  const address = `${local}@${domain.name}`;
  if (new TextEncoder().encode(address).length > MAX_ADDRESS) return { problem: `must be at most ${MAX_ADDRESS} octets` };
  return { address };
}

/** One mailbox as written: its display name (unquoted, unescaped; '' for none) and its addr-spec, unchecked. */
export interface MailboxParts { name: string; addrSpec: string }

export const NOT_ONE_MAILBOX = {
  list: 'must be one address: a list (`,` or `;`) is not accepted, give each address as its own entry',
  group: 'must be one address: a group (`name: …;`) is not accepted',
  twoAddresses: 'must be one address: it names more than one <address>',
  unterminated: 'must be an email address: a quoted display name is not closed',
  special: 'must be an email address: put a display name holding any of ( ) < > [ ] @ \\ " in double quotes',
} as const;

// RFC 5322 atext, plus any non-ASCII character (RFC 6532): a display-name word we write unquoted.
const ATEXT_WORD = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\u{10ffff}-]+$/u;
// What we read unquoted: atext and `.` (obs-phrase, as in `J. Smith <j@example.org>`).
const READ_WORD = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\u{10ffff}.-]+$/u;

/**
 * `addr-spec`, `<addr-spec>` or `display-name <addr-spec>` (RFC 5322 3.4),
 * split into its two parts, or why it is not exactly one mailbox: a `,` or
 * `;` outside quotes (a list), a `:` (a group), a second `<…>`, a comment or
 * an unquoted special in the name. The addr-spec is returned unchecked.
 *
 * @example parseOneMailbox('"Acme, Inc." <news@acme.test>') // { name: 'Acme, Inc.', addrSpec: 'news@acme.test' }
 * @example parseOneMailbox('ceo@bank.example, Foo <news@acme.test>') // { problem: NOT_ONE_MAILBOX.list }
 */
export function parseOneMailbox(input: string): MailboxParts | { problem: string } {
  const text = input.trim();
  let open = -1;
  let close = -1;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '\\') i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') {
      quoted = true;
    } else if (c === ',' || c === ';') {
      return { problem: NOT_ONE_MAILBOX.list };
    } else if (c === ':' && open < 0) {
      return { problem: NOT_ONE_MAILBOX.group };
    } else if (c === '<') {
      if (open >= 0) return { problem: close >= 0 ? NOT_ONE_MAILBOX.twoAddresses : 'must be an email address' };
      open = i;
    } else if (c === '>') {
      if (open < 0 || close >= 0) return { problem: 'must be an email address' };
      close = i;
    }
  }
  if (quoted) return { problem: NOT_ONE_MAILBOX.unterminated };
  if (open < 0) return { name: '', addrSpec: text };
  if (close < 0 || text.slice(close + 1).trim() !== '') return { problem: 'must be an email address' };
  const name = displayName(text.slice(0, open));
  if (name === null) return { problem: NOT_ONE_MAILBOX.special };
  return { name, addrSpec: text.slice(open + 1, close).trim() };
}

/** A phrase's words (unquoted words and quoted strings) joined by single spaces; null when a word is neither. */
function displayName(phrase: string): string | null {
  const text = phrase.trim();
  const word = /\s*(?:"((?:[^"\\]|\\.)*)"|([^\s"]+))/y;
  const words: string[] = [];
  while (word.lastIndex < text.length) {
    const m = word.exec(text);
    if (!m) return null;
    if (m[1] !== undefined) words.push(m[1].replace(/\\(.)/g, '$1'));
    else if (READ_WORD.test(m[2]!)) words.push(m[2]!);
    else return null;
  }
  return words.join(' ').trim();
}

/**
 * The header form of one mailbox, built from its parts (never from what the
 * client wrote): the bare address without a name; else the name as is when
 * it is atext words only, else as one quoted string; then `<address>`. The
 * relay node encodes a non-ASCII name (RFC 2047) when it composes.
 *
 * @example formatMailbox('Acme, Inc.', 'news@acme.test') // '"Acme, Inc." <news@acme.test>'
 */
export function formatMailbox(name: string, address: string): string {
  if (!name) return address;
  const plain = name.split(' ').every((w) => ATEXT_WORD.test(w));
  return `${plain ? name : `"${name.replace(/["\\]/g, '\\$&')}"`} <${address}>`;
}
