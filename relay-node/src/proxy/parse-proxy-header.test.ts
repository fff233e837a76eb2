import { describe, expect, test } from 'vitest';
import { buildProxyV1, buildProxyV2 } from './build-proxy-header.js';
import { MAX_PROXY_HEADER_BYTES, V2_SIGNATURE } from './header-types.js';
import { parseProxyHeader } from './parse-proxy-header.js';

const v4 = { source: '203.0.113.7', destination: '10.0.0.1', sourcePort: 40000, destinationPort: 25 };
const v6 = { source: '2001:db8::7', destination: '2001:db8::1', sourcePort: 40001, destinationPort: 587 };
const latin1 = (text: string) => Buffer.from(text, 'latin1');

describe('v1', () => {
  test('TCP4', () => {
    const header = buildProxyV1(v4);
    expect(parseProxyHeader(header)).toEqual({
      kind: 'ok', version: 1, bytesConsumed: header.length, local: false, source: { address: '203.0.113.7', port: 40000 },
    });
  });

  test('TCP6, with the address in canonical form', () => {
    const result = parseProxyHeader(latin1('PROXY TCP6 2001:DB8:0:0::7 2001:db8::1 40001 587\r\n'));
    expect(result).toMatchObject({ kind: 'ok', local: false, source: { address: '2001:db8::7', port: 40001 } });
  });

  test('TCP6 carrying an IPv4-mapped address reports the IPv4 address', () => {
    const result = parseProxyHeader(latin1('PROXY TCP6 ::ffff:198.51.100.9 ::1 1 2\r\n'));
    expect(result).toMatchObject({ kind: 'ok', source: { address: '198.51.100.9', port: 1 } });
  });

  test('UNKNOWN, with or without the rest of the line, is local', () => {
    expect(parseProxyHeader(buildProxyV1())).toEqual({ kind: 'ok', version: 1, bytesConsumed: 15, local: true });
    const long = latin1('PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n');
    expect(parseProxyHeader(long)).toEqual({ kind: 'ok', version: 1, bytesConsumed: long.length, local: true });
  });

  test('bytes after the header are not consumed', () => {
    const header = buildProxyV1(v4);
    const result = parseProxyHeader(Buffer.concat([header, latin1('EHLO x\r\n')]));
    expect(result).toMatchObject({ kind: 'ok', bytesConsumed: header.length });
  });

  test('every proper prefix is incomplete', () => {
    const header = buildProxyV1(v6);
    for (let n = 0; n < header.length; n++) expect(parseProxyHeader(header.subarray(0, n))).toEqual({ kind: 'incomplete' });
  });

  test.each([
    ['an SMTP command', 'EHLO example.com\r\n'],
    ['lower-case PROXY', 'proxy TCP4 1.2.3.4 5.6.7.8 1 2\r\n'],
    ['a bare LF', 'PROXY TCP4 1.2.3.4 5.6.7.8 1 2\n'],
    ['a bare CR', 'PROXY TCP4 1.2.3.4 5.6.7.8 1 2\rX'],
    ['an unknown protocol', 'PROXY UDP4 1.2.3.4 5.6.7.8 1 2\r\n'],
    ['a missing port', 'PROXY TCP4 1.2.3.4 5.6.7.8 1\r\n'],
    ['an extra field', 'PROXY TCP4 1.2.3.4 5.6.7.8 1 2 3\r\n'],
    ['a double space', 'PROXY TCP4  1.2.3.4 5.6.7.8 1 2\r\n'],
    ['a host name', 'PROXY TCP4 mail.example 5.6.7.8 1 2\r\n'],
    ['an IPv6 address under TCP4', 'PROXY TCP4 ::1 ::1 1 2\r\n'],
    ['an IPv4 address under TCP6', 'PROXY TCP6 1.2.3.4 5.6.7.8 1 2\r\n'],
    ['a zone id', 'PROXY TCP6 fe80::1%eth0 ::1 1 2\r\n'],
    ['a leading-zero octet', 'PROXY TCP4 1.2.3.04 5.6.7.8 1 2\r\n'],
    ['a port above 65535', 'PROXY TCP4 1.2.3.4 5.6.7.8 65536 2\r\n'],
    ['a leading-zero port', 'PROXY TCP4 1.2.3.4 5.6.7.8 01 2\r\n'],
    ['a control byte', 'PROXY TCP4 1.2.3.4\t5.6.7.8 1 2\r\n'],
    ['a non-ASCII byte', 'PROXY TCP4 1.2.3.\xe94 5.6.7.8 1 2\r\n'],
  ])('%s is invalid', (_name, text) => {
    expect(parseProxyHeader(latin1(text)).kind).toBe('invalid');
  });

  test('garbage is invalid from its first wrong byte, without waiting for a line end', () => {
    expect(parseProxyHeader(latin1('E')).kind).toBe('invalid');
    expect(parseProxyHeader(latin1('PROXX')).kind).toBe('invalid');
  });

  test('a line longer than 107 bytes is invalid even before its end arrives', () => {
    const long = latin1(`PROXY UNKNOWN ${'a'.repeat(100)}`);
    expect(long.length).toBeGreaterThanOrEqual(107);
    expect(parseProxyHeader(long)).toMatchObject({ kind: 'invalid', reason: expect.stringContaining('107') });
    const exactly107 = latin1(`PROXY UNKNOWN ${'a'.repeat(91)}\r\n`);
    expect(exactly107.length).toBe(107);
    expect(parseProxyHeader(exactly107).kind).toBe('ok');
    expect(parseProxyHeader(latin1(`PROXY UNKNOWN ${'a'.repeat(92)}\r\n`)).kind).toBe('invalid');
  });
});

describe('v2', () => {
  test('PROXY over IPv4', () => {
    const header = buildProxyV2({ command: 'proxy', endpoints: v4 });
    expect(header.length).toBe(28);
    expect(parseProxyHeader(header)).toEqual({
      kind: 'ok', version: 2, bytesConsumed: 28, local: false, source: { address: '203.0.113.7', port: 40000 },
    });
  });

  test('PROXY over IPv6', () => {
    const header = buildProxyV2({ command: 'proxy', endpoints: v6 });
    expect(header.length).toBe(52);
    expect(parseProxyHeader(header)).toEqual({
      kind: 'ok', version: 2, bytesConsumed: 52, local: false, source: { address: '2001:db8::7', port: 40001 },
    });
  });

  test('LOCAL (a health check) is local, whatever its address block says', () => {
    expect(parseProxyHeader(buildProxyV2({ command: 'local' }))).toEqual({ kind: 'ok', version: 2, bytesConsumed: 16, local: true });
    const withBlock = buildProxyV2({ command: 'local', endpoints: v4 });
    expect(parseProxyHeader(withBlock)).toEqual({ kind: 'ok', version: 2, bytesConsumed: 28, local: true });
  });

  test.each([
    ['AF_UNSPEC', 0x00],
    ['AF_UNIX stream', 0x31],
    ['AF_UNIX datagram', 0x32],
  ])('PROXY with %s is local', (_name, familyByte) => {
    const header = buildProxyV2({ command: 'proxy', familyByte, tlvs: new Uint8Array(216) });
    expect(parseProxyHeader(header)).toEqual({ kind: 'ok', version: 2, bytesConsumed: header.length, local: true });
  });

  test('TLVs are skipped and bytes after them are left alone', () => {
    // PP2_TYPE_AUTHORITY "mx.example" and a PP2_TYPE_NOOP.
    const tlvs = Buffer.concat([Buffer.from([0x02, 0x00, 0x0a]), Buffer.from('mx.example'), Buffer.from([0x04, 0x00, 0x02, 0, 0])]);
    const header = buildProxyV2({ command: 'proxy', endpoints: v4, tlvs });
    const result = parseProxyHeader(Buffer.concat([header, Buffer.from('EHLO x\r\n')]));
    expect(result).toMatchObject({ kind: 'ok', bytesConsumed: 28 + tlvs.length, source: { address: '203.0.113.7' } });
  });

  test('every proper prefix is incomplete', () => {
    const header = buildProxyV2({ command: 'proxy', endpoints: v6, tlvs: new Uint8Array(20) });
    for (let n = 0; n < header.length; n++) expect(parseProxyHeader(header.subarray(0, n))).toEqual({ kind: 'incomplete' });
  });

  test('a length beyond the 4 KiB cap is invalid as soon as the length is read', () => {
    const header = buildProxyV2({ command: 'proxy', endpoints: v4, tlvs: new Uint8Array(MAX_PROXY_HEADER_BYTES) });
    expect(parseProxyHeader(header.subarray(0, 16))).toMatchObject({ kind: 'invalid', reason: expect.stringContaining('cap') });
    const atCap = buildProxyV2({ command: 'proxy', endpoints: v4, tlvs: new Uint8Array(MAX_PROXY_HEADER_BYTES - 28) });
    expect(atCap.length).toBe(MAX_PROXY_HEADER_BYTES);
    expect(parseProxyHeader(atCap).kind).toBe('ok');
  });

  test.each([
    ['version 1', (h: Buffer) => { h[12] = 0x11; }],
    ['command 2', (h: Buffer) => { h[12] = 0x22; }],
    ['UDP over IPv4', (h: Buffer) => { h[13] = 0x12; }],
    ['UDP over IPv6', (h: Buffer) => { h[13] = 0x22; }],
    ['an unknown family', (h: Buffer) => { h[13] = 0x41; }],
    ['an IPv4 block too short', (h: Buffer) => { h[13] = 0x11; h.writeUInt16BE(8, 14); }],
    ['an IPv6 block too short', (h: Buffer) => { h[13] = 0x21; }],
    ['a broken signature', (h: Buffer) => { h[7] = 0x00; }],
  ])('%s is invalid', (_name, spoil) => {
    const header = buildProxyV2({ command: 'proxy', endpoints: v4 });
    spoil(header);
    expect(parseProxyHeader(header.subarray(0, 28)).kind).toBe('invalid');
  });

  test('a bad version is invalid before the rest arrives', () => {
    expect(parseProxyHeader(Buffer.concat([V2_SIGNATURE, Buffer.from([0x31])])).kind).toBe('invalid');
  });
});

test('an empty buffer is incomplete', () => {
  expect(parseProxyHeader(Buffer.alloc(0))).toEqual({ kind: 'incomplete' });
});
