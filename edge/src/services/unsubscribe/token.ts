// One-click unsubscribe tokens (docs/sending.md, "One-click unsubscribe").
// A message on a broadcast stream (or one that asked) carries, per recipient:
//   List-Unsubscribe: <https://<host>/unsubscribe/<token>>, <mailto:unsub-<email id>-<mac>@bounces.<host>>
// The HTTPS token is `<email id, 32 hex>.<issued at, unix seconds, base 36>.<mac>`,
// the MAC HMAC-SHA-256 (full 256 bits, base64url) over the project, stream,
// recipient address, email id and issue time, under a key derived from
// `database.crypto.encryption_key` for this purpose alone. The token names
// only the email: the rest is read from its row and must match the MAC, so a
// token cannot be forged, enumerated, or turned on another address, stream
// or project. The `mailto:` local part has room for 80 bits of MAC over the
// same facts, with the email's creation as its issue time.
import { base64url, type Config } from '@edgemail/shared';
import { derivedMacKey } from '../../crypto/derived-mac-key.js';

export type TokenSettings = Pick<Config, 'database.crypto.encryption_key'>;

/** What a token is bound to: read from the email's row at verification. */
export interface UnsubscribeFacts {
  projectId: string;
  stream: string;
  /** The recipient, any case (compared lower case). */
  address: string;
  emailId: string;
}

const KEY_INFO = 'edgemail one-click unsubscribe v1';

function macKey(encryptionKey: string): Promise<CryptoKey> {
  return derivedMacKey(encryptionKey, KEY_INFO);
}

const idHex = (uuid: string) => uuid.replace(/-/g, '').toLowerCase();
const uuidOf = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

/** The signed text: every fact, `|`-separated (none of them can hold a `|` but the address, which comes last but one and is followed by a uuid). */
async function mac(settings: TokenSettings, form: 'https' | 'mailto', facts: UnsubscribeFacts, issuedAt: number): Promise<Uint8Array> {
  const text = ['v1', form, facts.projectId, facts.stream, facts.address.toLowerCase(), facts.emailId.toLowerCase(), String(issuedAt)].join('|');
  return new Uint8Array(await crypto.subtle.sign('HMAC', await macKey(settings['database.crypto.encryption_key']), new TextEncoder().encode(text)));
}

function equal(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}

/** @param issuedAt unix seconds */
export async function httpsToken(settings: TokenSettings, facts: UnsubscribeFacts, issuedAt: number): Promise<string> {
  return `${idHex(facts.emailId)}.${issuedAt.toString(36)}.${base64url(await mac(settings, 'https', facts, issuedAt))}`;
}

const HTTPS_TOKEN = /^([0-9a-f]{32})\.([0-9a-z]{1,8})\.([A-Za-z0-9_-]{43})$/;

/** The email a token names and when it was issued, before its MAC is checked (that needs the row); null when it is not a token's shape. */
export function readHttpsToken(token: string): { emailId: string; issuedAt: number; mac: string } | null {
  const m = HTTPS_TOKEN.exec(token);
  if (!m) return null;
  return { emailId: uuidOf(m[1]!), issuedAt: parseInt(m[2]!, 36), mac: m[3]! };
}

export async function httpsTokenMatches(settings: TokenSettings, read: { issuedAt: number; mac: string }, facts: UnsubscribeFacts): Promise<boolean> {
  return equal(base64url(await mac(settings, 'https', facts, read.issuedAt)), read.mac);
}

const MAILTO_MAC_HEX = 20;
const MAILTO_LOCAL = /^unsub-([0-9a-f]{32})-([0-9a-f]{20})$/;
const hex = (bytes: Uint8Array) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');

/** `unsub-<email id>-<mac>`: 59 characters, within a local part's 64. @param createdAt the email's creation, unix seconds */
export async function mailtoLocalPart(settings: TokenSettings, facts: UnsubscribeFacts, createdAt: number): Promise<string> {
  return `unsub-${idHex(facts.emailId)}-${hex(await mac(settings, 'mailto', facts, createdAt)).slice(0, MAILTO_MAC_HEX)}`;
}

/** The email an `unsub-…` local part names (any case), before its MAC is checked; null when it is not one. */
export function readMailtoLocalPart(local: string): { emailId: string; mac: string } | null {
  const m = MAILTO_LOCAL.exec(local.toLowerCase());
  return m ? { emailId: uuidOf(m[1]!), mac: m[2]! } : null;
}

export async function mailtoMatches(settings: TokenSettings, read: { mac: string }, facts: UnsubscribeFacts, createdAt: number): Promise<boolean> {
  return equal(hex(await mac(settings, 'mailto', facts, createdAt)).slice(0, MAILTO_MAC_HEX), read.mac);
}
