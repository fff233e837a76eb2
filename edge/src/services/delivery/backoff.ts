// When a deferred recipient is tried again, and when it stops being tried
// (docs/sending.md, "Relay protocol: outbound"): `outbound.retry_delay`
// doubled per earlier deferral, at most an hour; past `outbound.max_age`
// (counted from the send) a deferral fails the recipient as expired.
import { sql, type SQL } from 'drizzle-orm';

/** The longest wait between two attempts. */
export const MAX_RETRY_DELAY_MS = 3_600_000;

/**
 * The wait after a deferral, as an interval: `retryDelayMs × 2^deferrals`
 * (deferrals before this one), at most `MAX_RETRY_DELAY_MS`.
 */
export function retryDelay(retryDelayMs: number, deferrals: SQL): SQL {
  // The exponent is bounded so that the power stays finite; 2^32 times any delay is past the cap.
  return sql`(least(${retryDelayMs}::float8 * power(2::float8, least(${deferrals}, 32)), ${MAX_RETRY_DELAY_MS}::float8) * interval '1 millisecond')`;
}

/** JavaScript twin of `retryDelay`, for the docs and tests. */
export const retryDelayMs = (retryDelayMsSetting: number, deferrals: number): number =>
  Math.min(retryDelayMsSetting * 2 ** Math.min(deferrals, 32), MAX_RETRY_DELAY_MS);

/** Whole seconds as the two largest units: `2d 0h`, `5h 12m`, `3m 20s`, `45s` (the `<age>` of `expired after <age>`). */
export function ageText(seconds: SQL): SQL {
  return sql`(case
    when ${seconds} >= 86400 then (${seconds} / 86400)::text || 'd ' || (${seconds} % 86400 / 3600)::text || 'h'
    when ${seconds} >= 3600 then (${seconds} / 3600)::text || 'h ' || (${seconds} % 3600 / 60)::text || 'm'
    when ${seconds} >= 60 then (${seconds} / 60)::text || 'm ' || (${seconds} % 60)::text || 's'
    else ${seconds}::text || 's' end)`;
}

/** JavaScript twin of `ageText`. */
export function formatAge(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s >= 86_400) return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${s}s`;
}
