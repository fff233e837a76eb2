/** Stop (trying further hosts, and the attempt itself) this long before the lease runs out, so the result still counts. */
export const LEASE_MARGIN_MS = 10_000;

/**
 * The margin kept before a lease's end, given what is left of it, ms: 10 s,
 * or a fifth of what is left when that is less (tests use leases of seconds),
 * so an attempt always gets most of its lease.
 *
 * @example leaseMargin(300_000) // 10_000
 */
export function leaseMargin(leftMs: number): number {
  return Math.round(Math.min(LEASE_MARGIN_MS, Math.max(0, leftMs) / 5));
}
