// Retention of delivery records (`delivery_records_retention_days`): webhook
// deliveries with their attempts, and outbound delivery attempts. Only what is
// finished goes, so a retry in progress never loses the history it counts
// (outbound backoff counts an email's deferred attempts).
import { sql, type SQL } from 'drizzle-orm';
import { emailAttempts, emails, webhookAttempts, webhookDeliveries } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

/** Rows one statement deletes: short locks, and no statement outlives a Worker's request to the database. */
const BATCH = 5_000;
/** Batches per table per run: at most 100,000 rows an hour each; the rest goes at the next run. */
const MAX_BATCHES = 20;

export interface PurgedDeliveryRecords {
  /** Webhook deliveries deleted (their `webhook_attempts` go with them). */
  webhookDeliveries: number;
  /** Webhook attempts deleted with those deliveries. */
  webhookAttempts: number;
  emailAttempts: number;
}

/** Runs `statement` (one bounded delete answering `deleted` and `along`, rows a cascade took with them) until it deletes less than a batch. */
async function inBatches(db: Db, statement: SQL): Promise<{ deleted: number; along: number }> {
  const total = { deleted: 0, along: 0 };
  for (let i = 0; i < MAX_BATCHES; i++) {
    const { rows: [row] } = await db.execute<{ deleted: number | string; along: number | string }>(statement);
    const deleted = Number(row?.deleted ?? 0);
    total.deleted += deleted;
    total.along += Number(row?.along ?? 0);
    if (deleted < BATCH) break;
  }
  return total;
}

/**
 * Deletes, for the hourly cron, webhook deliveries finished (succeeded or
 * failed) more than `days` ago with their attempts, and the attempts of
 * outbound emails that are no longer queued or sending, started more than
 * `days` ago. `days` 0 keeps everything.
 *
 * @example const purged = await purgeDeliveryRecords(db, config['delivery_records_retention_days']);
 */
export async function purgeDeliveryRecords(db: Db, days: number): Promise<PurgedDeliveryRecords> {
  if (days <= 0) return { webhookDeliveries: 0, webhookAttempts: 0, emailAttempts: 0 };
  const cutoff = sql`now() - make_interval(days => ${days})`;
  // The attempts go with their delivery (ON DELETE CASCADE); counted from the statement's snapshot, which still holds them.
  const deliveries = await inBatches(db, sql`
    with gone as (
      delete from ${webhookDeliveries} where id in (
        select id from ${webhookDeliveries} where status <> 'pending' and completed_at < ${cutoff} limit ${BATCH})
      returning id)
    select (select count(*) from gone) as deleted,
      (select count(*) from ${webhookAttempts} where delivery_id in (select id from gone)) as along`);
  const attempts = await inBatches(db, sql`
    with gone as (
      delete from ${emailAttempts} where id in (
        select a.id from ${emailAttempts} a join ${emails} e on e.id = a.email_id
        where a.started_at < ${cutoff} and e.status not in ('queued', 'sending') limit ${BATCH})
      returning id)
    select count(*) as deleted, 0 as along from gone`);
  return { webhookDeliveries: deliveries.deleted, webhookAttempts: deliveries.along, emailAttempts: attempts.deleted };
}
