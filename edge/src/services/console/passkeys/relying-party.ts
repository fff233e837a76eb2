// The WebAuthn relying party (docs/console.md "Passkeys"): the service itself,
// named by the host of `server.public_url`. A passkey is bound to that host
// (its rpID) by the authenticator, so changing `server.public_url` to another
// host strands every passkey registered before.
import type { Config } from '@edgemail/shared';

export interface RelyingParty {
  /** The host of `server.public_url` (no port, no brackets). */
  rpID: string;
  rpName: string;
  /**
   * The page origins a ceremony may come from: `server.public_url`'s, and each
   * `cors.allowed_origins` entry whose host is the rpID or under it (the only
   * other origins a browser lets use this rpID; the rest could never answer).
   */
  origins: string[];
}

const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '');

export function relyingParty(config: Config): RelyingParty {
  const publicUrl = new URL(config['server.public_url']);
  const rpID = hostOf(publicUrl);
  const origins = new Set([publicUrl.origin]);
  for (const allowed of config['cors.allowed_origins']) {
    const url = new URL(allowed);
    const host = hostOf(url);
    if (host === rpID || host.endsWith(`.${rpID}`)) origins.add(url.origin);
  }
  return { rpID, rpName: 'edgemail', origins: [...origins] };
}
