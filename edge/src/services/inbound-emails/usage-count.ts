// The per-project inbound storage quota (`inbound.storage_quota_bytes`):
// counted by the cron once a minute, a sum over inbound_emails, so ingest
// never waits on a shared counter row. The relay domain list reads the result.
import { sql } from 'drizzle-orm';
import { inboundEmails, inboundUsage } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

export interface UsageReport {
  /** Projects holding inbound mail. */
  projects: number;
  /** Of those, how many have reached the quota. */
  full: number;
}

/**
 * Stores each project's stored raw bytes and whether they reach `quotaBytes`
 * (0: never), and forgets projects that hold no inbound mail any more.
 *
 * @example const { full } = await countInboundUsage(db, config['inbound.storage_quota_bytes']);
 */
export async function countInboundUsage(db: Db, quotaBytes: number): Promise<UsageReport> {
  const result = await db.execute<{ projects: number; full: number }>(sql`
    with totals as (
      select ${inboundEmails.projectId} as project_id, sum(${inboundEmails.size})::bigint as bytes
      from ${inboundEmails} group by ${inboundEmails.projectId}
    ), stored as (
      insert into ${inboundUsage} (project_id, stored_bytes, quota_reached)
      select project_id, bytes, ${quotaBytes}::bigint > 0 and bytes >= ${quotaBytes}::bigint from totals
      on conflict (project_id) do update set stored_bytes = excluded.stored_bytes, quota_reached = excluded.quota_reached
      where (${inboundUsage.storedBytes}, ${inboundUsage.quotaReached}) is distinct from (excluded.stored_bytes, excluded.quota_reached)
    ), emptied as (
      delete from ${inboundUsage} where project_id not in (select project_id from totals)
    )
    select count(*)::int as projects, (count(*) filter (where ${quotaBytes}::bigint > 0 and bytes >= ${quotaBytes}::bigint))::int as full from totals`);
  const row = result.rows[0]!;
  return { projects: Number(row.projects), full: Number(row.full) };
}
