// The envelope sender of a forwarded message (Sender Rewriting Scheme,
// docs/inbound-rules.md): `SRS0=<hash>=<tt>=<original domain>=<original
// local part>@<domain>`, so the receiver's SPF check sees our domain, not
// the original sender's (which never authorised us). `tt` is the day
// number mod 1024 in two base32 characters; `hash` is the first 8 hex
// characters of an HMAC-SHA-256 of `tt=domain=local` (domain lower case)
// under a key derived for this purpose alone, so only we can mint one.
// A sender that is already an SRS address (a forward of a forward) becomes
// `SRS1=<hash>=<first forwarder's domain>==<the SRS0 address's rest>`, so the
// address does not grow with each hop.
import { splitAddress, type Config } from '@edgemail/shared';
import { derivedMacKey } from '../../crypto/derived-mac-key.js';

const KEY_INFO = 'edgemail srs forward v1';
const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** The day stamp: days since the epoch mod 1024, two base32 characters. */
export function srsTimestamp(now: Date): string {
  const day = Math.floor(now.getTime() / 86_400_000) % 1024;
  return BASE32[day >> 5]! + BASE32[day & 31]!;
}

/**
 * @example await srsAddress(config, 'ann@sender.example', 'bounces.mail.example.com') // 'SRS0=1a2b3c4d=xy=sender.example=ann@bounces.mail.example.com'
 */
export async function srsAddress(settings: Pick<Config, 'database.crypto.encryption_key'>, sender: string, domain: string, now = new Date()): Promise<string | null> {
  const parts = splitAddress(sender);
  if (!parts) return null;
  const key = await derivedMacKey(settings['database.crypto.encryption_key'], KEY_INFO);
  const hashOf = async (text: string) => [...new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(text)))]
    .slice(0, 4).map((b) => b.toString(16).padStart(2, '0')).join('');
  const origDomain = parts.domain.toLowerCase();
  // SRS1=<hash>=<first forwarder>==<rest of the SRS0 address>: `opaque` keeps the first forwarder's part.
  const srs1 = /^SRS1[=+-][^=]*=([^=]+)=(=.*)$/i.exec(parts.local);
  const srs0 = /^SRS0([=+-].*)$/i.exec(parts.local);
  if (srs1 || srs0) {
    const first = srs1 ? srs1[1]!.toLowerCase() : origDomain;
    const opaque = srs1 ? srs1[2]! : srs0![1]!;
    return `SRS1=${await hashOf(`${first}=${opaque}`)}=${first}=${opaque}@${domain}`;
  }
  const tt = srsTimestamp(now);
  return `SRS0=${await hashOf(`${tt}=${origDomain}=${parts.local}`)}=${tt}=${origDomain}=${parts.local}@${domain}`;
}
