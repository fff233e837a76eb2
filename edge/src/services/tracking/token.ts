// Tracking tokens (docs/tracking.md, "Tokens"): what an open pixel's or a
// rewritten link's path carries. The token itself holds everything the
// endpoint needs (the email, the link's place and URL, when it was issued),
// so answering a click reads no database; an HMAC under a key derived from
// `database.crypto.encryption_key` proves this installation wrote it. A
// changed byte, a link moved to another email, or a URL that was never in
// the message fails the MAC: the endpoint answers 404 and redirects nowhere.
import { base64url, type Config } from '@edgemail/shared';
import { derivedMacKey } from '../../crypto/derived-mac-key.js';

/** HKDF `info`: this purpose's own key (the same master key seals secrets and signs return paths). */
const KEY_INFO = 'edgemail tracking token v1';
const VERSION = 1;
/** Bytes of HMAC-SHA-256 kept: 128 bits. */
const MAC_BYTES = 16;
/** version, kind, email id (16), issued (uint32 seconds), link index (uint16). */
const HEAD_BYTES = 1 + 1 + 16 + 4 + 2;
/** A URL longer than this is left as it was (not tracked): browsers and mail clients cut long links anyway. */
export const MAX_TRACKED_URL = 2048;

export type TrackingKind = 'open' | 'click';
const KIND_CODE: Record<TrackingKind, number> = { open: 1, click: 2 };

export interface TrackingClaim {
  kind: TrackingKind;
  /** The recipient's row (`emails.id`): one per recipient, so the token is that recipient's. */
  emailId: string;
  /** Unix seconds when the job carrying the token was built (the claim, just before delivery). */
  issuedAt: number;
  /** Clicks: the link's place among the message's tracked links (0-based) and its URL. */
  linkIndex: number;
  url: string;
}

type Settings = Pick<Config, 'database.crypto.encryption_key'>;

function macKey(encryptionKey: string): Promise<CryptoKey> {
  return derivedMacKey(encryptionKey, KEY_INFO);
}

const uuidBytes = (id: string) => Uint8Array.from(id.replace(/-/g, '').match(/../g)!.map((h) => parseInt(h, 16)));
const uuidText = (b: Uint8Array) => {
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

function fromBase64url(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text) || text.length % 4 === 1) return null;
  const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  // Only the one canonical spelling: unused low bits of the last character must be zero, so a token has one form.
  return base64url(bytes) === text ? bytes : null;
}

async function mac(settings: Settings, payload: Uint8Array): Promise<Uint8Array> {
  // A copy: an ArrayBuffer-backed view, as the Node typings of the cli's build require.
  const signature = await crypto.subtle.sign('HMAC', await macKey(settings['database.crypto.encryption_key']), new Uint8Array(payload));
  return new Uint8Array(signature, 0, MAC_BYTES);
}

/** `<payload>.<mac>`, both base64url: only URL-safe characters, never escaped in an HTML attribute. */
export async function signToken(settings: Settings, claim: TrackingClaim): Promise<string> {
  const url = new TextEncoder().encode(claim.kind === 'click' ? claim.url : '');
  const payload = new Uint8Array(HEAD_BYTES + url.length);
  const view = new DataView(payload.buffer);
  payload[0] = VERSION;
  payload[1] = KIND_CODE[claim.kind];
  payload.set(uuidBytes(claim.emailId), 2);
  view.setUint32(18, claim.issuedAt >>> 0);
  view.setUint16(22, claim.kind === 'click' ? claim.linkIndex : 0);
  payload.set(url, HEAD_BYTES);
  return `${base64url(payload)}.${base64url(await mac(settings, payload))}`;
}

/**
 * The claim of a token this installation signed for `kind`, or null: a
 * malformed token, a MAC that does not match (compared in constant time),
 * another kind's token, or a click URL that is not http(s).
 */
export async function verifyToken(settings: Settings, kind: TrackingKind, token: string): Promise<TrackingClaim | null> {
  if (token.length > 4 * MAX_TRACKED_URL) return null;
  const [payloadText, macText, extra] = token.split('.');
  if (payloadText === undefined || macText === undefined || extra !== undefined) return null;
  const payload = fromBase64url(payloadText);
  const given = fromBase64url(macText);
  if (!payload || !given || payload.length < HEAD_BYTES || given.length !== MAC_BYTES) return null;
  const expected = await mac(settings, payload);
  let diff = 0;
  for (let i = 0; i < MAC_BYTES; i++) diff |= expected[i]! ^ given[i]!;
  if (diff !== 0) return null;
  if (payload[0] !== VERSION || payload[1] !== KIND_CODE[kind]) return null;
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  let url = '';
  if (kind === 'click') {
    try {
      url = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(payload.subarray(HEAD_BYTES));
    } catch {
      return null;
    }
    // Signed by us after the same check; checked again so that nothing but http(s) is ever a Location.
    if (!isTrackableUrl(url)) return null;
  }
  return { kind, emailId: uuidText(payload.subarray(2, 18)), issuedAt: view.getUint32(18), linkIndex: view.getUint16(22), url };
}

/** An absolute http(s) URL, already normalised (`new URL(...).href`), short enough to carry. */
export function isTrackableUrl(href: string): boolean {
  if (href.length > MAX_TRACKED_URL) return false;
  try {
    const url = new URL(href);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.href === href;
  } catch {
    return false;
  }
}
