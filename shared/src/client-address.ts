// The one rule for "which address is the client": allowlists, rate limits and
// the audit log all read it from here.
import { parseIp } from './ip.js';

/**
 * The client address when the connecting peer is not known: a self-hosted
 * workerd without Cloudflare in front sends no CF-Connecting-IP. It is no
 * address at all, so it fails every allowlist, and all such requests share
 * one rate-limit bucket.
 */
export const UNKNOWN_ADDRESS = 'unknown';

/** The connecting peer from CF-Connecting-IP; UNKNOWN_ADDRESS when absent or unreadable, never a default such as loopback. */
export function peerAddress(cfConnectingIp: string | null | undefined): string {
  const addr = cfConnectingIp ? parseIp(cfConnectingIp) : null;
  return addr ? addr.toString() : UNKNOWN_ADDRESS;
}

export interface ClientAddressInput {
  /** The connecting peer (behind Cloudflare: CF-Connecting-IP), as `peerAddress` reads it. */
  peer: string;
  /** The raw X-Forwarded-For header, if any. */
  forwardedFor?: string | null;
  /** Whether an address is one of `server.trusted_proxies`. */
  isTrustedProxy: (ip: string) => boolean;
}

/**
 * X-Forwarded-For is believed only when the peer is a trusted proxy; it is read
 * from the right, stopping at the first entry that is not a trusted proxy. A
 * chain with any unreadable entry falls back to the peer.
 *
 * @example resolveClientAddress({ peer: '10.0.0.1', forwardedFor: '203.0.113.9', isTrustedProxy: (ip) => ip === '10.0.0.1' }) // '203.0.113.9'
 */
export function resolveClientAddress({ peer, forwardedFor, isTrustedProxy }: ClientAddressInput): string {
  if (!forwardedFor) return peer;
  const peerAddr = parseIp(peer)?.toString() ?? peer;
  if (!isTrustedProxy(peerAddr)) return peerAddr;
  const chain = forwardedFor.split(',').map((entry) => parseIp(entry));
  if (chain.some((addr) => addr === null)) return peerAddr;
  const addrs = chain.map((addr) => addr!.toString());
  for (let i = addrs.length - 1; i >= 0; i--) {
    if (!isTrustedProxy(addrs[i]!)) return addrs[i]!;
  }
  // Every hop is a trusted proxy: the leftmost is the furthest we can see.
  return addrs[0] ?? peerAddr;
}
