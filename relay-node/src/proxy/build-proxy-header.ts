// Writes PROXY headers the way a balancer does: for tests and local tooling
// (the relay node itself only ever reads them).
import { isIPv4 } from 'node:net';
import { parseIp } from '@edgemail/shared';
import { V2_SIGNATURE } from './header-types.js';

export interface ProxyEndpoints {
  source: string;
  destination: string;
  sourcePort: number;
  destinationPort: number;
}

/** A v1 line for TCP4/TCP6 endpoints, or `PROXY UNKNOWN\r\n` without them. */
export function buildProxyV1(endpoints?: ProxyEndpoints): Buffer {
  if (!endpoints) return Buffer.from('PROXY UNKNOWN\r\n', 'latin1');
  const protocol = isIPv4(endpoints.source) ? 'TCP4' : 'TCP6';
  const { source, destination, sourcePort, destinationPort } = endpoints;
  return Buffer.from(`PROXY ${protocol} ${source} ${destination} ${sourcePort} ${destinationPort}\r\n`, 'latin1');
}

export interface ProxyV2Options {
  /** `local` is the balancer's health check; `proxy` carries endpoints. */
  command: 'local' | 'proxy';
  endpoints?: ProxyEndpoints;
  /** Raw TLV bytes appended after the addresses. */
  tlvs?: Uint8Array;
  /** Overrides the family/transport byte (for malformed-header tests). */
  familyByte?: number;
}

/** A v2 header: signature, version/command, family, length, addresses, TLVs. */
export function buildProxyV2(options: ProxyV2Options): Buffer {
  const { endpoints } = options;
  let family = 0x00;
  let addresses = Buffer.alloc(0);
  if (endpoints) {
    const source = parseIp(endpoints.source);
    const destination = parseIp(endpoints.destination);
    if (!source || !destination) throw new Error('buildProxyV2: endpoints must be IP addresses');
    const v4 = source.kind() === 'ipv4';
    family = v4 ? 0x11 : 0x21;
    const ports = Buffer.alloc(4);
    ports.writeUInt16BE(endpoints.sourcePort, 0);
    ports.writeUInt16BE(endpoints.destinationPort, 2);
    addresses = Buffer.concat([Buffer.from(source.toByteArray()), Buffer.from(destination.toByteArray()), ports]);
  }
  const tlvs = Buffer.from(options.tlvs ?? new Uint8Array());
  const preamble = Buffer.alloc(4);
  preamble[0] = options.command === 'local' ? 0x20 : 0x21;
  preamble[1] = options.familyByte ?? family;
  preamble.writeUInt16BE(addresses.length + tlvs.length, 2);
  return Buffer.concat([V2_SIGNATURE, preamble, addresses, tlvs]);
}
