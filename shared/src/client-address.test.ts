import { describe, expect, test } from 'vitest';
import { peerAddress, resolveClientAddress, UNKNOWN_ADDRESS } from './client-address.js';
import { ipMatcher } from './ip.js';

const isTrustedProxy = ipMatcher(['10.0.0.0/8', '2001:db8:ffff::/48']);

describe('resolveClientAddress', () => {
  test.each([
    ['no proxies configured: the peer', '203.0.113.5', '198.51.100.1', '203.0.113.5', ipMatcher([])],
    ['untrusted peer: X-Forwarded-For is ignored (spoofing)', '203.0.113.5', '198.51.100.1', '203.0.113.5', isTrustedProxy],
    ['trusted peer without the header: the peer', '10.0.0.2', undefined, '10.0.0.2', isTrustedProxy],
    ['trusted peer: the entry left of it', '10.0.0.2', '198.51.100.1', '198.51.100.1', isTrustedProxy],
    ['read from the right, skipping trusted hops', '10.0.0.2', '198.51.100.1, 10.0.0.9', '198.51.100.1', isTrustedProxy],
    ['stops at the first untrusted entry (spoofed left part ignored)', '10.0.0.2', '1.1.1.1, 198.51.100.1, 10.0.0.9', '198.51.100.1', isTrustedProxy],
    ['an unreadable entry anywhere falls back to the peer', '10.0.0.2', 'garbage, 198.51.100.1', '10.0.0.2', isTrustedProxy],
    ['an entry with a port is unreadable', '10.0.0.2', '198.51.100.1:4711', '10.0.0.2', isTrustedProxy],
    ['an empty entry is unreadable', '10.0.0.2', '198.51.100.1,,', '10.0.0.2', isTrustedProxy],
    ['every hop trusted: the leftmost', '10.0.0.2', '10.0.0.7, 10.0.0.9', '10.0.0.7', isTrustedProxy],
    ['IPv6 client behind a trusted IPv6 proxy', '2001:db8:ffff::1', '2001:db8:1::42', '2001:db8:1::42', isTrustedProxy],
    ['IPv6 peer untrusted', '2001:db8:1::1', '198.51.100.1', '2001:db8:1::1', isTrustedProxy],
    ['IPv4-mapped peer is its IPv4 address', '::ffff:10.0.0.2', '198.51.100.1', '198.51.100.1', isTrustedProxy],
  ])('%s', (_name, peer, forwardedFor, expected, trusted) => {
    expect(resolveClientAddress({ peer: peer as string, forwardedFor: forwardedFor as string | undefined, isTrustedProxy: trusted as (ip: string) => boolean })).toBe(expected);
  });
});

describe('peerAddress', () => {
  test.each([
    ['203.0.113.5', '203.0.113.5'],
    ['2001:DB8::1', '2001:db8::1'],
    ['::ffff:10.0.0.2', '10.0.0.2'],
    [undefined, UNKNOWN_ADDRESS],
    ['', UNKNOWN_ADDRESS],
    ['garbage', UNKNOWN_ADDRESS],
    ['127.0.0.1:80', UNKNOWN_ADDRESS],
  ])('%s → %s', (header, expected) => expect(peerAddress(header)).toBe(expected));

  test('an unknown peer matches no allowlist, not even 0.0.0.0/0 or loopback', () => {
    expect(ipMatcher(['0.0.0.0/0', '::/0', '127.0.0.1'])(peerAddress(undefined))).toBe(false);
  });
});
