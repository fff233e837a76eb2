import { describe, expect, it, test } from 'vitest';
import { addressBucket, ipMatcher, isIp, isIpOrCidr, nonPublicRange } from './ip.js';

describe('ipMatcher', () => {
  const match = ipMatcher(['203.0.113.0/24', '198.51.100.7', '2001:db8::/32', '::1']);
  test.each([
    ['203.0.113.9', true],
    ['203.0.114.1', false],
    ['198.51.100.7', true],
    ['198.51.100.8', false],
    ['2001:db8:1::5', true],
    ['2001:db9::1', false],
    ['::1', true],
    ['::ffff:203.0.113.20', true], // IPv4-mapped IPv6 is the IPv4 address
    ['127.0.0.1', false],
    ['not-an-ip', false],
  ])('%s → %s', (ip, expected) => expect(match(ip)).toBe(expected));

  test('an empty list matches nothing', () => expect(ipMatcher([])('127.0.0.1')).toBe(false));
});

describe('validation', () => {
  test.each(['10.0.0.1', '::1', '2001:db8::1', '[::1]'])('%s is an address', (s) => expect(isIp(s)).toBe(true));
  test.each(['10', '10.1', '300.1.1.1', 'example.com', '', '1.2.3.4:80'])('%s is not an address', (s) => expect(isIp(s)).toBe(false));
  test.each(['10.0.0.0/8', '2001:db8::/32', '192.0.2.1'])('%s is an address or range', (s) => expect(isIpOrCidr(s)).toBe(true));
  test.each(['10.0.0.0/33', '2001:db8::/129', '10/8', 'abc/8'])('%s is refused', (s) => expect(isIpOrCidr(s)).toBe(false));
});

describe('addressBucket', () => {
  test.each([
    ['203.0.113.9', '203.0.113.9'],
    ['2001:db8:1:2:aa::1', '2001:db8:1:2::/64'],
    ['2001:db8:1:2:ffff:ffff:ffff:ffff', '2001:db8:1:2::/64'],
    ['2001:db8:1:3::1', '2001:db8:1:3::/64'],
    ['::ffff:198.51.100.4', '198.51.100.4'],
    ['unknown', 'unknown'],
  ])('%s → %s', (ip, expected) => expect(addressBucket(ip)).toBe(expected));
});

describe('nonPublicRange', () => {
  it('names the range of resolved addresses as they come from DNS', () => {
    expect(nonPublicRange('8.8.8.8')).toBeNull();
    expect(nonPublicRange('2a00:1450:4001::200e')).toBeNull();
    expect(nonPublicRange('10.1.2.3')).toBe('private');
    expect(nonPublicRange('::ffff:10.0.0.1')).toBe('ipv4-mapped');
    expect(nonPublicRange('64:ff9b::a00:1')).toBe('nat64');
    expect(nonPublicRange('198.18.0.1')).toBe('reserved');
    expect(nonPublicRange('240.0.0.1')).toBe('reserved');
    expect(nonPublicRange('not an address')).toBe('unreadable');
  });
});
