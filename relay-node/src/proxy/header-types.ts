// What a PROXY protocol parser answers, and the limits both versions share.

/** The peer a balancer reports: the client's address and port. */
export interface ProxySource {
  address: string;
  port: number;
}

/**
 * The parse of the first bytes a trusted peer sent.
 * - `incomplete`: a valid prefix so far; wait for more bytes.
 * - `invalid`: not a PROXY header (or a malformed one); drop the connection.
 * - `ok`: a whole header of `bytesConsumed` bytes. `local` means "use the
 *   socket's own address" (v2 `LOCAL`, v1 `UNKNOWN`, AF_UNIX or unspecified).
 */
export type ProxyHeaderResult =
  | { kind: 'incomplete' }
  | { kind: 'invalid'; reason: string }
  | { kind: 'ok'; version: 1 | 2; bytesConsumed: number; local: boolean; source?: ProxySource };

/**
 * Most bytes a trusted peer may send before its header is complete. v1 is at
 * most 107 bytes; v2 is 16 plus a 16-bit length, which we bound here so that a
 * peer cannot make us buffer 64 KiB of TLVs we skip anyway.
 */
export const MAX_PROXY_HEADER_BYTES = 4096;

/** The v1 line, "PROXY" to CRLF inclusive, is at most 107 bytes (spec 2.1). */
export const MAX_V1_HEADER_BYTES = 107;

/** The 12 bytes every v2 header starts with (spec 2.2). */
export const V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);

export const INCOMPLETE = { kind: 'incomplete' } as const;

export function invalid(reason: string): { kind: 'invalid'; reason: string } {
  return { kind: 'invalid', reason };
}

/** True when `buf` agrees with `prefix` on every byte both have. */
export function startsLike(buf: Uint8Array, prefix: Uint8Array): boolean {
  const n = Math.min(buf.length, prefix.length);
  for (let i = 0; i < n; i++) if (buf[i] !== prefix[i]) return false;
  return true;
}
