// Bulk-sender health per day and stream (docs/analytics.md, "Sender health"):
// complaints and delivered mail from the aggregate (`email_daily_counts`, by
// the day each email was created), unsubscribes from `unsubscribes` (by the
// day they came), each day's rates beside them.
import { sql } from 'drizzle-orm';
import { emailDailyCounts, emails, outboundMessages, unsubscribes } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { StreamHealth } from '../../contracts/analytics.js';

const DAY_MS = 86_400_000;
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const ratio = (n: number, d: number) => (d === 0 ? null : n / d);

/** Every stream with mail or unsubscribes in the range, by name, each with every day of the range. */
export async function streamHealth(db: Db, projectId: string, range: { from: string; to: string; days: number; domain: string | null; tag: string | null }): Promise<StreamHealth[]> {
  const { from, to, domain, tag } = range;
  const [counts, unsubs] = await Promise.all([
    db.execute<{ stream: string; day: string; complaints: number; delivered: number }>(sql`
      select stream, to_char(day, 'YYYY-MM-DD') as day,
        sum(count) filter (where status = 'complained')::int as complaints,
        sum(count) filter (where status in ('sent', 'complained'))::int as delivered
      from ${emailDailyCounts}
      where project_id = ${projectId} and day between ${from} and ${to} and tag = ${tag ?? ''}
        ${domain === null ? sql`` : sql`and from_domain = ${domain}`}
      group by stream, day`),
    db.execute<{ stream: string; day: string; n: number }>(sql`
      select u.stream, to_char((u.created_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, count(*)::int as n
      from ${unsubscribes} u
      ${domain === null && tag === null ? sql`` : sql`join ${emails} e on e.id = u.email_id join ${outboundMessages} m on m.id = e.message_id`}
      where u.project_id = ${projectId}
        and u.created_at >= ${from}::date and u.created_at < ${to}::date + 1
        ${domain === null ? sql`` : sql`and email_daily_counts_from_domain(m."from") = ${domain}`}
        ${tag === null ? sql`` : sql`and ${tag} = any(m.tags)`}
      group by 1, 2`),
  ]);
  type Day = { complaints: number; delivered: number; unsubscribes: number };
  const byStream = new Map<string, Map<string, Day>>();
  const dayIn = (stream: string, day: string) => {
    let days = byStream.get(stream);
    if (!days) {
      days = new Map();
      for (let i = 0; i < range.days; i++) days.set(dayOf(Date.parse(`${from}T00:00:00Z`) + i * DAY_MS), { complaints: 0, delivered: 0, unsubscribes: 0 });
      byStream.set(stream, days);
    }
    return days.get(day)!;
  };
  for (const r of counts.rows) {
    const d = dayIn(r.stream, r.day);
    d.complaints += Number(r.complaints ?? 0);
    d.delivered += Number(r.delivered ?? 0);
  }
  for (const r of unsubs.rows) dayIn(r.stream, r.day).unsubscribes += Number(r.n);
  const rates = (d: Day) => ({ ...d, complaint_rate: ratio(d.complaints, d.delivered), unsubscribe_rate: ratio(d.unsubscribes, d.delivered) });
  return [...byStream].sort(([a], [b]) => a.localeCompare(b)).map(([stream, days]) => {
    const totals = { complaints: 0, delivered: 0, unsubscribes: 0 };
    for (const d of days.values()) {
      totals.complaints += d.complaints;
      totals.delivered += d.delivered;
      totals.unsubscribes += d.unsubscribes;
    }
    return { stream, days: [...days].map(([day, d]) => ({ day, ...rates(d) })), totals: rates(totals) };
  });
}
