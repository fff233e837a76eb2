import type { Db } from '../../db/client.js';
import type { Usage } from '../../contracts/email.js';
import { planUsage, type PlanUsageRow } from '../emails/limits.js';

/**
 * The project's plan limits beside what the trailing hour and day used, as
 * the send routes count them (suppressed rows not counted; sandbox rows are).
 */
export async function getUsage(db: Db, projectId: string, notices: Usage['notices'] = []): Promise<Usage> {
  const { rows: [row] } = await db.execute<PlanUsageRow>(planUsage(projectId));
  if (!row) throw new Error(`project ${projectId} not found for usage`);
  const window = (limit: number, used: number) => ({ limit, used, remaining: limit === 0 ? null : Math.max(0, limit - used) });
  return {
    plan: row.plan_id && row.plan_name !== null ? { id: row.plan_id, name: row.plan_name } : null,
    hour: window(row.hourly_limit, row.hour_used),
    day: window(row.daily_limit, row.day_used),
    notices,
  };
}
