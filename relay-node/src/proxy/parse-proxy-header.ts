// The one entry point for reading a PROXY header, whichever version it is.
import { invalid, MAX_PROXY_HEADER_BYTES, type ProxyHeaderResult } from './header-types.js';
import { parseV1 } from './parse-v1.js';
import { parseV2 } from './parse-v2.js';

/**
 * Parses a PROXY protocol v1 or v2 header at the start of `buf`, which holds
 * every byte received so far. Pure: call it again with more bytes while it
 * answers `incomplete`. The first byte tells the versions apart ('P' for v1,
 * CR for v2), so a wrong first byte is `invalid` at once.
 *
 * @example
 * parseProxyHeader(Buffer.from('PROXY TCP4 203.0.113.7 10.0.0.1 40000 25\r\nEHLO x\r\n'))
 * // { kind: 'ok', version: 1, bytesConsumed: 42, local: false, source: { address: '203.0.113.7', port: 40000 } }
 */
export function parseProxyHeader(buf: Uint8Array): ProxyHeaderResult {
  if (buf.length === 0) return { kind: 'incomplete' };
  const result = buf[0] === 0x0d ? parseV2(buf) : parseV1(buf);
  // Both parsers already refuse to grow past the cap; this keeps the promise
  // even if one of them is changed.
  if (result.kind === 'incomplete' && buf.length >= MAX_PROXY_HEADER_BYTES) {
    return invalid(`no complete header within ${MAX_PROXY_HEADER_BYTES} bytes`);
  }
  return result;
}
