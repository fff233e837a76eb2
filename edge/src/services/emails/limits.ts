// Plan send limits (spec "Plan send limits"): rows of the emails table in the
// trailing hour and day, suppressed ones not counted; 0 is unlimited; a
// project without a plan is unlimited. The check and the insert it guards
// run in one transaction behind the project's `send` lock (db/project-lock.ts),
// so two sends can never both take the last slot. Any future path that creates
// emails rows (SMTP submission) takes the same lock and the same guard.
import { sql, type SQL } from 'drizzle-orm';
import { emails, plans, projects } from '@edgemail/schema';

export type LimitWindow = 'hour' | 'day';

/** The project's countable rows in the trailing window (an `emails_project_id_created_at_idx` range). */
export function usedIn(projectId: string, window: LimitWindow): SQL {
  return sql`(select count(*)::int from ${emails} where project_id = ${projectId} and created_at > now() - ${sql.raw(`interval '1 ${window}'`)} and status <> 'suppressed')`;
}

/**
 * True when `count` (an SQL integer: the send's statement counts its
 * unsuppressed recipients) more countable rows fit both windows of the
 * project's plan. Each window is counted only when its limit is set (an OR
 * arm evaluated lazily), so unlimited projects count nothing.
 */
export function withinLimits(projectId: string, count: SQL): SQL {
  return sql`(${count} = 0 or exists (
    select 1 from ${projects} p left join ${plans} pl on pl.id = p.plan_id
    where p.id = ${projectId}
      and (coalesce(pl.hourly_email_limit, 0) = 0 or ${usedIn(projectId, 'hour')} + ${count} <= pl.hourly_email_limit)
      and (coalesce(pl.daily_email_limit, 0) = 0 or ${usedIn(projectId, 'day')} + ${count} <= pl.daily_email_limit)))`;
}

/** The project's plan (null columns without one) beside its usage of both windows. */
export function planUsage(projectId: string): SQL {
  return sql`select pl.id as plan_id, pl.name as plan_name,
      coalesce(pl.hourly_email_limit, 0)::int as hourly_limit, coalesce(pl.daily_email_limit, 0)::int as daily_limit,
      ${usedIn(projectId, 'hour')} as hour_used, ${usedIn(projectId, 'day')} as day_used
    from ${projects} p left join ${plans} pl on pl.id = p.plan_id
    where p.id = ${projectId}`;
}

export type PlanUsageRow = {
  plan_id: string | null;
  plan_name: string | null;
  hourly_limit: number;
  daily_limit: number;
  hour_used: number;
  day_used: number;
};

/**
 * The spec's 429 message for a refused send of `count` countable rows, or
 * null when it fits (the hourly limit is named first when both are reached).
 */
export function limitReached(row: PlanUsageRow, count: number): string | null {
  const plan = row.plan_name ?? '';
  if (row.hourly_limit > 0 && row.hour_used + count > row.hourly_limit) {
    return `hourly email limit reached (${row.hourly_limit} per hour on plan ${plan})`;
  }
  if (row.daily_limit > 0 && row.day_used + count > row.daily_limit) {
    return `daily email limit reached (${row.daily_limit} per day on plan ${plan})`;
  }
  return null;
}
