// One text form per address, so that a client has one rate-limit bucket and one
// `client_ip` whether it came in over IPv4, dual-stack IPv6 or a PROXY header.
import { isIPv4, isIPv6 } from 'node:net';
import { parseIp } from '@edgemail/shared';

/**
 * The canonical text of an IP address: IPv4-mapped IPv6 unwrapped to IPv4,
 * IPv6 compressed and lower case (RFC 5952). Null when `text` is not a plain
 * address (zone ids and host names included).
 */
export function canonicalAddress(text: string, family?: 4 | 6): string | null {
  if (text.includes('%')) return null;
  if (family === 4 ? !isIPv4(text) : family === 6 ? !isIPv6(text) : !isIPv4(text) && !isIPv6(text)) return null;
  return parseIp(text)?.toString() ?? null;
}
