// The loop bounds of the forward action (docs/inbound-rules.md, "Forward").
// Each forward writes `X-Edgemail-Forwarded: <n>` (n = hops so far + 1); a
// message that arrives with n at or over FORWARD_MAX_HOPS, or with more
// Received headers than FORWARD_MAX_RECEIVED (a loop through other systems),
// is stored but not forwarded again.
export const FORWARD_MAX_HOPS = 3;
export const FORWARD_MAX_RECEIVED = 25;
export const HOP_HEADER = 'X-Edgemail-Forwarded';

/** Why a message must not be forwarded again, or null. `headers`: lower-case names, first values; `repeated`: every value of repeated ones. */
export function loopReason(headers: Record<string, string>, repeated: Record<string, string[]>): string | null {
  const hops = hopsOf(headers);
  if (hops >= FORWARD_MAX_HOPS) return `loop limit: forwarded ${hops} times already (${HOP_HEADER}), at most ${FORWARD_MAX_HOPS}`;
  const received = repeated.received?.length ?? (headers.received ? 1 : 0);
  if (received > FORWARD_MAX_RECEIVED) return `loop limit: ${received} Received headers, over ${FORWARD_MAX_RECEIVED}`;
  return null;
}

/** The hops a message has made through our forwards; a missing or garbled header is 0. */
export function hopsOf(headers: Record<string, string>): number {
  const n = Number.parseInt(headers[HOP_HEADER.toLowerCase()] ?? '', 10);
  return Number.isFinite(n) && n > 0 ? n : 0;
}

/** The internal header that carries a forward's SRS envelope sender to its job (delivery/jobs.ts); never sent as a header. */
export const FORWARD_RETURN_PATH_HEADER = 'Return-Path';
