// Opens and clicks for analytics (docs/analytics.md, "Opens and clicks"):
// read from `tracking_daily_counts`, which the tracking recorder keeps
// (record.ts), never from events. An open or click counts on the UTC day it
// happened; human and machine apart (docs/tracking.md, "Human or machine").
import { and, between, eq, sql } from 'drizzle-orm';
import { trackingDailyCounts } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { TrackingCountsRecord } from '../../contracts/analytics.js';

export const noTracking = (): TrackingCountsRecord => ({ opens: { human: 0, machine: 0 }, clicks: { human: 0, machine: 0 } });

export async function trackingCounts(db: Db, projectId: string, range: { from: string; to: string; domain: string | null; tag: string | null }) {
  const rows = await db.select({
    day: trackingDailyCounts.day, kind: trackingDailyCounts.kind, machine: trackingDailyCounts.machine,
    count: sql<number>`sum(${trackingDailyCounts.count})`.mapWith(Number),
  })
    .from(trackingDailyCounts)
    .where(and(
      eq(trackingDailyCounts.projectId, projectId),
      between(trackingDailyCounts.day, range.from, range.to),
      eq(trackingDailyCounts.tag, range.tag ?? ''),
      range.domain === null ? undefined : eq(trackingDailyCounts.fromDomain, range.domain),
    ))
    .groupBy(trackingDailyCounts.day, trackingDailyCounts.kind, trackingDailyCounts.machine);
  const byDay = new Map<string, TrackingCountsRecord>();
  const totals = noTracking();
  for (const row of rows) {
    const day = byDay.get(row.day) ?? noTracking();
    byDay.set(row.day, day);
    const kind = row.kind === 'open' ? 'opens' : 'clicks';
    const who = row.machine ? 'machine' : 'human';
    day[kind][who] += row.count;
    totals[kind][who] += row.count;
  }
  return { byDay, totals };
}
