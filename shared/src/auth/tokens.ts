// Token formats: `myk_` (project key), `mya_` (platform credential) and
// `myr_` (relay node credential), each `<prefix><8 chars>_<secret>` with a
// secret of 32 random bytes.
import { base64url } from '../base64.js';

export const PROJECT_KEY_PREFIX = 'myk_';
export const PLATFORM_CREDENTIAL_PREFIX = 'mya_';
export const RELAY_NODE_PREFIX = 'myr_';
export type TokenKind = 'project' | 'platform' | 'relay';

const PREFIX_OF: Record<TokenKind, string> = { project: PROJECT_KEY_PREFIX, platform: PLATFORM_CREDENTIAL_PREFIX, relay: RELAY_NODE_PREFIX };
const KIND_OF: Record<string, TokenKind> = { k: 'project', a: 'platform', r: 'relay' };

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const TOKEN = /^(my([kar])_[a-z0-9]{8})_([A-Za-z0-9_-]{43})$/;

function randomId(length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join('');
}

export interface NewToken { token: string; keyPrefix: string }

export function generateToken(kind: TokenKind): NewToken {
  const keyPrefix = PREFIX_OF[kind] + randomId(8);
  const secret = base64url(crypto.getRandomValues(new Uint8Array(32)));
  return { token: `${keyPrefix}_${secret}`, keyPrefix };
}

/** Splits a presented token; null when it is of none of the formats. */
export function parseToken(token: string): { kind: TokenKind; keyPrefix: string } | null {
  const m = TOKEN.exec(token);
  if (!m) return null;
  return { kind: KIND_OF[m[2]!]!, keyPrefix: m[1]! };
}

const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, '0'));
const encoder = new TextEncoder();

/** hex(sha256(text)); on every request's path, so kept lean. */
export async function sha256Hex(text: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', encoder.encode(text)));
  let hex = '';
  for (const b of digest) hex += HEX[b];
  return hex;
}

/** Compares two strings in time that depends only on their length. */
export function constantTimeEqual(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
}
