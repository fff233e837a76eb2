// Daily counts by status for a range of UTC days, read only from the
// aggregate `email_daily_counts` (kept by the triggers of migration 0009):
// a few rows per day whatever the number of emails, never a scan of `emails`.
import { and, between, eq, sql } from 'drizzle-orm';
import { emailDailyCounts } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invalid } from '../errors.js';
import {
  ANALYTICS_DEFAULT_DAYS, ANALYTICS_MAX_DAYS, ANALYTICS_STATUSES,
  type Analytics, type AnalyticsInput, type StatusCountsRecord,
} from '../../contracts/analytics.js';
import { noTracking, trackingCounts } from '../tracking/analytics.js';
import { streamHealth } from './stream-health.js';

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const msOf = (day: string) => Date.parse(`${day}T00:00:00Z`);

const queryProblem = (field: string, problem: string) => invalid(`invalid query: ${field}: ${problem}`, { [field]: problem });

/** The range asked for, defaults filled in; 400 naming the parameter when it is backwards or too long. */
export function analyticsRange(input: Pick<AnalyticsInput, 'from' | 'to'>, now = Date.now()): { from: string; to: string; days: number } {
  const to = input.to ?? dayOf(now);
  const from = input.from ?? dayOf(msOf(to) - (ANALYTICS_DEFAULT_DAYS - 1) * DAY_MS);
  const days = (msOf(to) - msOf(from)) / DAY_MS + 1;
  if (days < 1) throw queryProblem('to', `must not be before from (${from})`);
  if (days > ANALYTICS_MAX_DAYS) throw queryProblem('to', `the range must be at most ${ANALYTICS_MAX_DAYS} days (${from} to ${to} is ${days})`);
  return { from, to, days };
}

const zeros = (): StatusCountsRecord => Object.fromEntries(ANALYTICS_STATUSES.map((s) => [s, 0])) as StatusCountsRecord;

/** null when nothing left (0 ÷ 0 is no rate). */
const ratio = (n: number, d: number) => (d === 0 ? null : n / d);

export async function dailyCounts(db: Db, projectId: string, input: AnalyticsInput): Promise<Analytics> {
  const { from, to, days } = analyticsRange(input);
  const domain = input.domain?.toLowerCase() ?? null;
  const tag = input.tag ?? null;
  const tracking = trackingCounts(db, projectId, { from, to, domain, tag });
  const streams = streamHealth(db, projectId, { from, to, days, domain, tag });
  const rows = await db.select({
    day: emailDailyCounts.day, status: emailDailyCounts.status,
    count: sql<number>`sum(${emailDailyCounts.count})`.mapWith(Number),
  })
    .from(emailDailyCounts)
    .where(and(
      eq(emailDailyCounts.projectId, projectId),
      between(emailDailyCounts.day, from, to),
      // '' is the row counting every email; each tag has its own.
      eq(emailDailyCounts.tag, tag ?? ''),
      domain === null ? undefined : eq(emailDailyCounts.fromDomain, domain),
    ))
    .groupBy(emailDailyCounts.day, emailDailyCounts.status);

  const byDay = new Map<string, StatusCountsRecord>();
  const totals = zeros();
  for (let i = 0; i < days; i++) byDay.set(dayOf(msOf(from) + i * DAY_MS), zeros());
  for (const row of rows) {
    byDay.get(row.day)![row.status] += row.count;
    totals[row.status] += row.count;
  }
  const left = totals.sent + totals.bounced + totals.complained + totals.failed;
  const opensAndClicks = await tracking;
  return {
    from, to, domain, tag,
    days: [...byDay].map(([day, counts]) => ({ day, counts, tracking: opensAndClicks.byDay.get(day) ?? noTracking() })),
    totals,
    tracking: opensAndClicks.totals,
    streams: await streams,
    rates: { bounce_rate: ratio(totals.bounced + totals.failed, left), complaint_rate: ratio(totals.complained, left) },
  };
}
