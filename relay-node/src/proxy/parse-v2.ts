// PROXY protocol v2: a 16-byte binary preamble, then addresses and TLVs.
import { canonicalAddress } from './canonical-address.js';
import { INCOMPLETE, invalid, MAX_PROXY_HEADER_BYTES, startsLike, V2_SIGNATURE, type ProxyHeaderResult } from './header-types.js';

const PREAMBLE_BYTES = 16;
const COMMAND_LOCAL = 0x0;
const COMMAND_PROXY = 0x1;
// Family (high nibble) and transport (low nibble), spec 2.2.
const UNSPEC = 0x00;
const TCP_OVER_IPV4 = 0x11;
const TCP_OVER_IPV6 = 0x21;
const UNIX_STREAM = 0x31;
const UNIX_DGRAM = 0x32;
const IPV4_BLOCK_BYTES = 12;
const IPV6_BLOCK_BYTES = 36;

/** Parses a v2 header at the start of `buf`; TLVs are skipped unread. */
export function parseV2(buf: Uint8Array): ProxyHeaderResult {
  if (!startsLike(buf, V2_SIGNATURE)) return invalid('not a PROXY header');
  if (buf.length > V2_SIGNATURE.length) {
    const versionCommand = buf[12]!;
    if (versionCommand >> 4 !== 0x2) return invalid(`v2 version ${versionCommand >> 4} is not 2`);
    const command = versionCommand & 0x0f;
    if (command !== COMMAND_LOCAL && command !== COMMAND_PROXY) return invalid(`v2 command ${command} is not LOCAL or PROXY`);
  }
  if (buf.length < PREAMBLE_BYTES) return INCOMPLETE;

  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.length);
  const command = view[12]! & 0x0f;
  const family = view[13]!;
  const total = PREAMBLE_BYTES + view.readUInt16BE(14);
  if (total > MAX_PROXY_HEADER_BYTES) return invalid(`v2 header of ${total} bytes is over the ${MAX_PROXY_HEADER_BYTES}-byte cap`);
  if (view.length < total) return INCOMPLETE;

  // LOCAL: the balancer speaking for itself (health checks); the address block,
  // whatever its family, is to be ignored.
  if (command === COMMAND_LOCAL) return { kind: 'ok', version: 2, bytesConsumed: total, local: true };
  switch (family) {
    case UNSPEC:
    case UNIX_STREAM:
    case UNIX_DGRAM:
      // No IP to report: the socket's own address is the best we have.
      return { kind: 'ok', version: 2, bytesConsumed: total, local: true };
    case TCP_OVER_IPV4: {
      if (total < PREAMBLE_BYTES + IPV4_BLOCK_BYTES) return invalid('v2 IPv4 address block is too short');
      const address = canonicalAddress(Array.from(view.subarray(16, 20)).join('.'), 4);
      if (!address) return invalid('v2 IPv4 source address is invalid');
      return { kind: 'ok', version: 2, bytesConsumed: total, local: false, source: { address, port: view.readUInt16BE(24) } };
    }
    case TCP_OVER_IPV6: {
      if (total < PREAMBLE_BYTES + IPV6_BLOCK_BYTES) return invalid('v2 IPv6 address block is too short');
      const address = canonicalAddress(ipv6Text(view.subarray(16, 32)), 6);
      if (!address) return invalid('v2 IPv6 source address is invalid');
      return { kind: 'ok', version: 2, bytesConsumed: total, local: false, source: { address, port: view.readUInt16BE(48) } };
    }
    default:
      // UDP cannot carry an SMTP session, and unknown values must be refused (spec 2.2).
      return invalid(`v2 address family/transport 0x${family.toString(16).padStart(2, '0')} is not supported`);
  }
}

function ipv6Text(bytes: Buffer): string {
  const groups: string[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(bytes.readUInt16BE(i).toString(16));
  return groups.join(':');
}
