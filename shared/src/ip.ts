// IP addresses and CIDR ranges, v4 and v6, for allowlists and trusted proxies.
import ipaddr from 'ipaddr.js';

type Range = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses an address, unwrapping IPv4-mapped IPv6 (`::ffff:1.2.3.4`). */
export function parseIp(text: string): ipaddr.IPv4 | ipaddr.IPv6 | null {
  const t = text.trim().replace(/^\[(.*)\]$/, '$1');
  if (!ipaddr.isValid(t)) return null;
  // ipaddr.js accepts shorthand such as "10" or "1.2"; we want dotted quads only.
  if (t.includes('.') && !t.includes(':') && !ipaddr.IPv4.isValidFourPartDecimal(t)) return null;
  if (!t.includes('.') && !t.includes(':')) return null;
  const addr = ipaddr.parse(t);
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()
    ? (addr as ipaddr.IPv6).toIPv4Address()
    : addr;
}

export function isIp(text: string): boolean {
  return parseIp(text) !== null;
}

/** Parses `a.b.c.d`, `a.b.c.d/n`, `::1` or `2001:db8::/32`; null when it is neither. */
export function parseIpOrCidr(text: string): Range | null {
  const t = text.trim();
  if (!t.includes('/')) {
    const addr = parseIp(t);
    return addr ? [addr, addr.kind() === 'ipv4' ? 32 : 128] : null;
  }
  try {
    const [addr, bits] = ipaddr.parseCIDR(t);
    if (addr.kind() === 'ipv4' && !ipaddr.IPv4.isValidFourPartDecimal(t.split('/')[0]!)) return null;
    return [addr, bits];
  } catch {
    return null;
  }
}

export function isIpOrCidr(text: string): boolean {
  return parseIpOrCidr(text) !== null;
}

/**
 * A matcher for a list of addresses and ranges, compiled once.
 * @example ipMatcher(['10.0.0.0/8', '::1'])('10.1.2.3') // true
 */
export function ipMatcher(entries: readonly string[]): (ip: string) => boolean {
  const ranges = entries.map(parseIpOrCidr).filter((r): r is Range => r !== null);
  if (!ranges.length) return () => false;
  return (ip) => {
    const addr = parseIp(ip);
    if (!addr) return false;
    return ranges.some(([net, bits]) => net.kind() === addr.kind() && addr.match(net as never, bits));
  };
}

/**
 * The bucket an address is counted in by per-address limits: an IPv4 address
 * alone, an IPv6 address by its /64 (one subscriber's usual allocation, which
 * would otherwise be an endless supply of buckets). Unreadable text is its
 * own bucket.
 *
 * @example addressBucket('2001:db8:1:2:aa::1') // '2001:db8:1:2::/64'
 */
export function addressBucket(ip: string): string {
  const addr = parseIp(ip);
  if (!addr) return ip;
  if (addr.kind() === 'ipv4') return addr.toString();
  const parts = (addr as ipaddr.IPv6).parts.slice(0, 4);
  return `${new ipaddr.IPv6([...parts, 0, 0, 0, 0]).toString()}/64`;
}

/**
 * The ipaddr.js range of an address that is not public unicast, in words;
 * null for a public one. IPv4-mapped IPv6 is refused whatever it maps to:
 * it is a way of writing an IPv4 address that some stacks route to IPv4.
 */
export function nonPublicRange(address: string): string | null {
  const ip = parseIp(address);
  if (!ip) return 'unreadable';
  // parseIp unwraps `::ffff:a.b.c.d` to IPv4; a colon in the text gives it away.
  if (ip.kind() === 'ipv4' && address.includes(':')) return RANGE_WORDS.ipv4Mapped!;
  const range = ip.range();
  if (range !== 'unicast') return RANGE_WORDS[range] ?? range.replace(/([A-Z])/g, ' $1').toLowerCase();
  // ipaddr.js calls everything it has no name for unicast, ::7f00:1 (IPv4-
  // compatible, deprecated) included; public IPv6 is allocated from 2000::/3 only.
  if (ip.kind() === 'ipv6' && ((ip as { parts: number[] }).parts[0]! & 0xe000) !== 0x2000) return 'reserved';
  return null;
}

const RANGE_WORDS: Record<string, string> = {
  linkLocal: 'link-local',
  carrierGradeNat: 'cgnat',
  uniqueLocal: 'unique local',
  ipv4Mapped: 'ipv4-mapped',
  rfc6052: 'nat64',
  rfc6145: 'ipv4-translated',
  deprecatedSiteLocal: 'site-local',
};
