// PROXY protocol v1: one ASCII line, "PROXY TCP4|TCP6|UNKNOWN ...\r\n".
import { canonicalAddress } from './canonical-address.js';
import { INCOMPLETE, invalid, MAX_V1_HEADER_BYTES, startsLike, type ProxyHeaderResult } from './header-types.js';

export const V1_PREFIX = Buffer.from('PROXY ', 'latin1');
const CR = 0x0d;
const LF = 0x0a;
// Decimal 0..65535 without leading zeros (spec 2.1).
const PORT = /^(0|[1-9][0-9]{0,4})$/;

/**
 * Parses a v1 header at the start of `buf`. Anything that cannot become a valid
 * line (a byte outside printable ASCII, a bare CR or LF, more than 107 bytes)
 * is invalid as soon as it is seen, so garbage is dropped without waiting for
 * the header timeout.
 */
export function parseV1(buf: Uint8Array): ProxyHeaderResult {
  if (!startsLike(buf, V1_PREFIX)) return invalid('not a PROXY header');
  const limit = Math.min(buf.length, MAX_V1_HEADER_BYTES);
  let end = -1;
  for (let i = 0; i < limit; i++) {
    const byte = buf[i]!;
    if (byte === CR) {
      if (i + 1 >= buf.length) return INCOMPLETE;
      if (buf[i + 1] !== LF) return invalid('v1 header has a bare CR');
      end = i;
      break;
    }
    if (byte === LF) return invalid('v1 header ends in a bare LF');
    if (byte < 0x20 || byte > 0x7e) return invalid('v1 header has a non-printable byte');
  }
  if (end < 0) return buf.length >= MAX_V1_HEADER_BYTES ? invalid('v1 header longer than 107 bytes') : INCOMPLETE;
  if (end + 2 > MAX_V1_HEADER_BYTES) return invalid('v1 header longer than 107 bytes');

  const line = Buffer.from(buf.buffer, buf.byteOffset, end).toString('latin1');
  const fields = line.split(' ');
  const bytesConsumed = end + 2;
  // UNKNOWN: the balancer could not tell (or it is a health check); the rest of
  // the line is to be ignored and the socket's own endpoints used.
  if (fields[1] === 'UNKNOWN') return { kind: 'ok', version: 1, bytesConsumed, local: true };
  if (fields[1] !== 'TCP4' && fields[1] !== 'TCP6') return invalid(`v1 protocol ${JSON.stringify(fields[1] ?? '')} is not TCP4, TCP6 or UNKNOWN`);
  if (fields.length !== 6) return invalid('v1 header does not have exactly four address fields');
  const [, protocol, src, dst, srcPort, dstPort] = fields as [string, string, string, string, string, string];
  const family = protocol === 'TCP4' ? 4 : 6;
  const address = canonicalAddress(src, family);
  if (!address || !canonicalAddress(dst, family)) return invalid(`v1 address is not a valid ${protocol} address`);
  if (!validPort(srcPort) || !validPort(dstPort)) return invalid('v1 port is not a number from 0 to 65535');
  return { kind: 'ok', version: 1, bytesConsumed, local: false, source: { address, port: Number(srcPort) } };
}

function validPort(text: string): boolean {
  return PORT.test(text) && Number(text) <= 65535;
}
