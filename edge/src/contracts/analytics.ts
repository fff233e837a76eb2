import { z } from '@hono/zod-openapi';
import { emailStatus } from '@edgemail/schema';

/** Every status an email row can have: each day's counts name all of them, zeros included. */
export const ANALYTICS_STATUSES = emailStatus.enumValues;
export type AnalyticsStatus = (typeof ANALYTICS_STATUSES)[number];

export const ANALYTICS_DEFAULT_DAYS = 30;
export const ANALYTICS_MAX_DAYS = 366;

const DAY_PROBLEM = 'must be a date YYYY-MM-DD';
/** A calendar day that exists (not 2026-02-30). */
const isDay = (s: string) => {
  const t = Date.parse(`${s}T00:00:00Z`);
  return !Number.isNaN(t) && new Date(t).toISOString().slice(0, 10) === s;
};
const Day = (name: string, description: string) => z.string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, DAY_PROBLEM)
  .refine(isDay, DAY_PROBLEM)
  .optional()
  .openapi({ param: { name, in: 'query' }, format: 'date', example: '2026-11-01', description });

export const AnalyticsQuery = z.object({
  from: Day('from', `First UTC day, inclusive; default: ${ANALYTICS_DEFAULT_DAYS - 1} days before \`to\``),
  to: Day('to', 'Last UTC day, inclusive; default: today (UTC)'),
  domain: z.string().min(1, 'must not be empty').max(253, 'must be at most 253 characters').optional()
    .openapi({ param: { name: 'domain', in: 'query' }, example: 'acme.test', description: 'Only sends from this domain (the From address\'s domain; case-insensitive)' }),
  tag: z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters').optional()
    .openapi({ param: { name: 'tag', in: 'query' }, example: 'shipping', description: 'Only sends carrying this tag' }),
});

const count = z.number().int().min(0);
export const StatusCounts = z.object(Object.fromEntries(ANALYTICS_STATUSES.map((s) => [s, count])) as Record<AnalyticsStatus, typeof count>)
  .openapi('AnalyticsCounts', { description: 'Emails (one per recipient) by their status now, every status present' });

const rate = z.number().min(0).max(1).nullable();

const humanMachine = z.object({ human: count, machine: count });
export const TrackingCounts = z.object({ opens: humanMachine, clicks: humanMachine })
  .openapi('AnalyticsTrackingCounts', { description: 'Opens (pixel fetches) and clicks (tracked links followed) on the UTC day they happened, human and machine apart: a privacy proxy\'s, a scanner\'s or a prefetch\'s request is `machine` (docs/tracking.md). Every fetch counts: a recipient opening twice counts twice.' });

const healthCounts = {
  delivered: count.openapi({ description: 'Emails now `sent` or `complained`, by the day they were created' }),
  complaints: count.openapi({ description: 'Emails now `complained`, by the day they were created' }),
  unsubscribes: count.openapi({ description: 'One-click and `mailto:` unsubscribes, by the day they came' }),
  complaint_rate: rate.openapi({ description: 'complaints ÷ delivered; null when nothing was delivered. Gmail and Yahoo ask bulk senders to stay under 0.3%' }),
  unsubscribe_rate: rate.openapi({ description: 'unsubscribes ÷ delivered; null when nothing was delivered' }),
};
export const StreamHealthSchema = z.object({
  stream: z.string().openapi({ example: 'broadcast' }),
  days: z.array(z.object({ day: z.string().openapi({ format: 'date' }), ...healthCounts })),
  totals: z.object(healthCounts),
}).openapi('AnalyticsStreamHealth', { description: 'Bulk-sender health of one message stream (docs/analytics.md, "Sender health")' });

export const AnalyticsSchema = z.object({
  from: z.string().openapi({ format: 'date', example: '2026-10-28' }),
  to: z.string().openapi({ format: 'date', example: '2026-11-26' }),
  domain: z.string().nullable().openapi({ description: 'The from-domain filter, lower case; null: every domain' }),
  tag: z.string().nullable().openapi({ description: 'The tag filter; null: every email' }),
  days: z.array(z.object({ day: z.string().openapi({ format: 'date' }), counts: StatusCounts,
    tracking: TrackingCounts }))
    .openapi({ description: 'Every UTC day of the range in order, zeros included; an email counts on the day it was created' }),
  totals: StatusCounts,
  tracking: TrackingCounts,
  streams: z.array(StreamHealthSchema).openapi({ description: 'Per message stream with mail or unsubscribes in the range (by name), complaint and unsubscribe rate per day: the bulk sender health (docs/analytics.md, "Sender health"). The domain and tag filters apply.' }),
  rates: z.object({
    bounce_rate: rate.openapi({ description: '(bounced + failed) ÷ (sent + bounced + complained + failed); null when that is 0' }),
    complaint_rate: rate.openapi({ description: 'complained ÷ (sent + bounced + complained + failed); null when that is 0' }),
  }),
}).openapi('Analytics');

export type AnalyticsInput = z.infer<typeof AnalyticsQuery>;
export type Analytics = z.infer<typeof AnalyticsSchema>;
export type StatusCountsRecord = z.infer<typeof StatusCounts>;
export type TrackingCountsRecord = z.infer<typeof TrackingCounts>;
export type StreamHealth = z.infer<typeof StreamHealthSchema>;
