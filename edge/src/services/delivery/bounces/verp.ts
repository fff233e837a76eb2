// The VERP return path (docs/bounces.md, "Return path"): every message a
// relay node delivers by MX carries MAIL FROM
// `bounce-<email id, 32 hex>-<mac, 20 hex>@bounces.<host of server.public_url>`,
// so a DSN or a complaint that comes back names the email it is about, and
// the MAC (HMAC-SHA-256 of the email id, cut to 80 bits, under a key derived
// from `database.crypto.encryption_key`) proves that this service wrote it:
// a forged report naming another project's email is ignored.
import { normalizeDomainName, parseIp, splitAddress, type Config } from '@edgemail/shared';
import { derivedMacKey } from '../../../crypto/derived-mac-key.js';

export type VerpSettings = Pick<Config, 'server.public_url' | 'database.crypto.encryption_key'>;

/** HKDF `info`: the key is this purpose's alone (the same master key seals secrets with AES-GCM). */
const KEY_INFO = 'edgemail bounce return path v1';
const MAC_HEX = 20;
const LOCAL_PART = /^bounce-([0-9a-f]{32})-([0-9a-f]{20})$/;

/**
 * `bounces.<host of server.public_url>`, lower case; null when that host is
 * an IP address or not a fully qualified name (`pnpm dev`'s 127.0.0.1): then
 * no return path is set and mail keeps the bare from address as its envelope
 * sender, as before.
 */
export function bounceDomain(settings: Pick<Config, 'server.public_url'>): string | null {
  let host: string;
  try {
    host = new URL(settings['server.public_url']).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return null;
  }
  // The host itself must be a fully qualified name (`localhost` is not), and so must the bounce domain.
  if (parseIp(host) || !('name' in normalizeDomainName(host))) return null;
  const checked = normalizeDomainName(`bounces.${host}`);
  return 'name' in checked ? checked.name : null;
}

// One derived key per master key (an isolate serves one installation; tests may run several).
function macKey(encryptionKey: string): Promise<CryptoKey> {
  return derivedMacKey(encryptionKey, KEY_INFO);
}

const hex = (bytes: ArrayBuffer) => [...new Uint8Array(bytes)].map((b) => b.toString(16).padStart(2, '0')).join('');

async function macOf(settings: VerpSettings, idHex: string): Promise<string> {
  const signature = await crypto.subtle.sign('HMAC', await macKey(settings['database.crypto.encryption_key']), new TextEncoder().encode(idHex));
  return hex(signature).slice(0, MAC_HEX);
}

/**
 * The return path of `emailId`, or null when there is no bounce domain.
 * @example await verpAddress(config, 'f3b1…') // 'bounce-f3b1…-9c2e…@bounces.mail.example.com'
 */
export async function verpAddress(settings: VerpSettings, emailId: string): Promise<string | null> {
  const domain = bounceDomain(settings);
  if (!domain) return null;
  const idHex = emailId.replace(/-/g, '').toLowerCase();
  return `bounce-${idHex}-${await macOf(settings, idHex)}@${domain}`;
}

export type VerpVerdict =
  | { ok: true; emailId: string }
  | { ok: false; problem: string };

/**
 * The email a return path names, when its MAC is right. Case is ignored (some
 * servers change the local part's case). The comparison is constant-time.
 */
export async function verpEmailId(settings: VerpSettings, address: string): Promise<VerpVerdict> {
  const parts = splitAddress(address);
  const domain = bounceDomain(settings);
  if (!parts || !domain || parts.domain.toLowerCase() !== domain) return { ok: false, problem: 'not an address at the bounce domain' };
  const m = LOCAL_PART.exec(parts.local.toLowerCase());
  if (!m) return { ok: false, problem: 'not a return path (bounce-<email id>-<mac>)' };
  const [, idHex, mac] = m as unknown as [string, string, string];
  const expected = await macOf(settings, idHex);
  let diff = 0;
  for (let i = 0; i < MAC_HEX; i++) diff |= expected.charCodeAt(i) ^ mac.charCodeAt(i);
  if (diff !== 0) return { ok: false, problem: 'bad MAC' };
  const emailId = `${idHex.slice(0, 8)}-${idHex.slice(8, 12)}-${idHex.slice(12, 16)}-${idHex.slice(16, 20)}-${idHex.slice(20)}`;
  return { ok: true, emailId };
}
