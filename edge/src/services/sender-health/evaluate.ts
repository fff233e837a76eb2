// The bulk-sender complaint threshold (docs/analytics.md, "Sender health"):
// a project's complaint rate is its complaints per delivered email (`sent` +
// `complained`, by the day each email was created) over the trailing 7 UTC
// days, read from the analytics aggregate. Crossing
// `sending.complaint_threshold_basis_points` sets `sender_health.over_threshold_since`
// and, in the same statement, writes the `project.complaint_threshold_crossed`
// audit event and webhook event: once, as only the update that finds the
// mark unset fires. Falling back under the threshold clears the mark, so a
// later crossing fires again. Evaluated every minute by the cron, and for a
// project whenever its usage is read.
import { sql, type SQL } from 'drizzle-orm';
import { auditEvents, emailDailyCounts, outbox, senderHealth } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { eventsByProject, type OutboxRows } from '../emails/events.js';
import { handedOverUnlessSubscribed } from '../webhooks/subscribed.js';

export type HealthSettings = Pick<Config, 'sending.complaint_threshold_basis_points'>;

export const HEALTH_WINDOW_DAYS = 7;
export const thresholdOf = (settings: HealthSettings) => settings['sending.complaint_threshold_basis_points'] / 10_000;

const percent = (rate: number) => `${(rate * 100).toFixed(2).replace(/\.?0+$/, '')}%`;

/** The window's rates of the projects that could be over (complaints in it) or were (marked); `only` narrows to one project. */
function rated(only: string | null): SQL {
  const day0 = sql`((now() at time zone 'UTC')::date - ${HEALTH_WINDOW_DAYS - 1}::int)`;
  const project = (column: SQL) => (only ? sql`and ${column} = ${only}` : sql``);
  return sql`candidates as (
      select distinct d.project_id from ${emailDailyCounts} d
      where d.tag = '' and d.status = 'complained' and d.count > 0 and d.day >= ${day0} ${project(sql`d.project_id`)}
      union
      select h.project_id from ${senderHealth} h where h.over_threshold_since is not null ${project(sql`h.project_id`)}
    ), counted as (
      select c.project_id,
        coalesce(sum(d.count) filter (where d.status = 'complained'), 0)::bigint as complaints,
        coalesce(sum(d.count) filter (where d.status in ('sent', 'complained')), 0)::bigint as delivered
      from candidates c left join ${emailDailyCounts} d on d.project_id = c.project_id and d.tag = '' and d.day >= ${day0}
      group by c.project_id
    ), rated as (
      select *, case when delivered > 0 then complaints::float8 / delivered else 0 end as rate,
        to_char(${day0}, 'YYYY-MM-DD') as window_from, to_char((now() at time zone 'UTC')::date, 'YYYY-MM-DD') as window_to
      from counted
    )`;
}

/**
 * Evaluates the threshold for every project (the cron) or one (`only`);
 * answers the outbox rows the crossings wrote, for `handOverOutbox`.
 */
export async function evaluateComplaintThreshold(db: Db, settings: HealthSettings, only: string | null = null): Promise<Map<string, OutboxRows>> {
  const threshold = thresholdOf(settings);
  if (threshold <= 0) return new Map();
  // A row to mark first (the statement below updates; an insert in it would be invisible to its update).
  await db.execute(sql`with ${rated(only)}
    insert into ${senderHealth} (project_id, complaint_rate) select project_id, rate from rated where rate > ${threshold}::float8
    on conflict (project_id) do nothing`);
  const { rows: [row] } = await db.execute<{ events: { id: number; project_id: string; settled: boolean }[] | null }>(sql`
    with ${rated(only)},
    crossed as (
      update ${senderHealth} h set over_threshold_since = now(), complaint_rate = r.rate, checked_at = now()
      from rated r where h.project_id = r.project_id and r.rate > ${threshold}::float8 and h.over_threshold_since is null
      returning h.project_id, r.rate, r.complaints, r.delivered, r.window_from, r.window_to
    ),
    cleared as (
      update ${senderHealth} h set over_threshold_since = null, complaint_rate = r.rate, checked_at = now()
      from rated r where h.project_id = r.project_id and not (r.rate > ${threshold}::float8) and h.over_threshold_since is not null
      returning h.project_id
    ),
    audited as (
      insert into ${auditEvents} (category, type, project_id, detail)
      select 'project', 'project.complaint_threshold_crossed', c.project_id,
        'complaint rate ' || round((c.rate * 100)::numeric, 2) || '% over ' || c.window_from || ' to ' || c.window_to
          || ' (' || c.complaints || ' complaints of ' || c.delivered || ' delivered) is over the threshold of '
          || ${percent(threshold)} || ' (sending.complaint_threshold_basis_points)'
      from crossed c
    ),
    events as (
      insert into ${outbox} (project_id, event, data, handed_over_at)
      select c.project_id, 'project.complaint_threshold_crossed',
        jsonb_build_object('project_id', c.project_id, 'complaint_rate', c.rate, 'threshold', ${threshold}::float8,
          'complaints', c.complaints, 'delivered', c.delivered, 'window', jsonb_build_object('from', c.window_from, 'to', c.window_to)),
        ${handedOverUnlessSubscribed(sql`c.project_id`, sql`'project.complaint_threshold_crossed'`)}
      from crossed c
      returning id, project_id, handed_over_at
    )
    select (select count(*) from cleared) as cleared,
      (select json_agg(json_build_object('id', id, 'project_id', project_id, 'settled', handed_over_at is not null)) from events) as events`);
  return eventsByProject(row?.events ?? []);
}

export interface HealthNotice {
  code: 'complaint_rate_over_threshold';
  message: string;
  since: string;
  complaint_rate: number;
  threshold: number;
}

/** The notice `GET /api/v1/usage` shows while the project is over the threshold. */
export async function healthNotices(db: Db, settings: HealthSettings, projectId: string): Promise<HealthNotice[]> {
  const threshold = thresholdOf(settings);
  if (threshold <= 0) return [];
  const { rows: [row] } = await db.execute<{ since: string; rate: number }>(sql`
    select to_char(over_threshold_since at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as since, complaint_rate as rate
    from ${senderHealth} where project_id = ${projectId} and over_threshold_since is not null`);
  if (!row) return [];
  return [{
    code: 'complaint_rate_over_threshold',
    message: `complaint rate ${percent(row.rate)} over the last ${HEALTH_WINDOW_DAYS} days is over ${percent(threshold)} (sending.complaint_threshold_basis_points), the bulk sender limit of Gmail and Yahoo: mail may be refused or go to spam; send only to recipients who asked, and honour unsubscribes`,
    since: row.since, complaint_rate: Number(row.rate), threshold,
  }];
}
