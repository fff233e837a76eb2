// The cron sweep's webhook work: outbox rows an isolate committed but died
// before handing over, rows the console's event stream never took (its
// hand-over failed every try), deliveries whose alarm was lost (every minute),
// and old outbox rows (hourly: no index serves that scan).
import { sql } from 'drizzle-orm';
import { outbox, webhookDeliveries } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { Bindings } from '../../env.js';
import { publishOutbox } from '../event-stream/publish.js';
import { heldBack } from '../webhooks/queue.js';
import { handOverOutbox, wakeDispatcher } from './hand-over.js';

/** A row younger than this is still being handed over by the request that wrote it. */
export const HAND_OVER_GRACE_SECONDS = 5;
/**
 * A row handed to the dispatcher but still not in the event stream this long
 * after its commit: its stream hand-over failed (tried three times within a
 * fraction of a second), so the sweep gives it to the stream again.
 */
export const STREAM_GRACE_SECONDS = 60;
/** A due delivery this late has lost its alarm (a dispatcher woken on time takes it within a second). */
const OVERDUE_SECONDS = 30;
/** Handed-over rows are kept this long (deliveries keep their own copy of the event). */
const OUTBOX_RETENTION_DAYS = 7;
const SWEEP_ROWS = 5000;

export interface SweepResult { handedOver: number; streamed: number; woken: number }

export async function sweepWebhooks(db: Db, env: Bindings): Promise<SweepResult> {
  const [stranded, unstreamed, overdue] = await db.batch([
    db.execute<{ project_id: string; ids: string[] }>(sql`
      select project_id, array_agg(id order by id)::text[] as ids from (
        select id, project_id from ${outbox}
        where handed_over_at is null and created_at < now() - ${HAND_OVER_GRACE_SECONDS} * interval '1 second'
        order by created_at limit ${SWEEP_ROWS}) s
      group by project_id`),
    // Rows not handed over at all are in the first list, whose hand-over goes to the stream too.
    db.execute<{ project_id: string; ids: string[] }>(sql`
      select project_id, array_agg(id order by id)::text[] as ids from (
        select id, project_id from ${outbox}
        where streamed_at is null and handed_over_at is not null
          and created_at < now() - ${STREAM_GRACE_SECONDS} * interval '1 second'
        order by created_at limit ${SWEEP_ROWS}) s
      group by project_id`),
    // A delivery held back behind an earlier one of its key (ordered webhooks) is not late: it waits by design.
    db.execute<{ project_id: string }>(sql`
      select distinct project_id from ${webhookDeliveries} d
      where status = 'pending' and next_attempt_at < now() - ${OVERDUE_SECONDS} * interval '1 second' and not ${heldBack('d')}`),
  ]);
  await Promise.all([
    ...stranded.rows.map((r) => handOverOutbox(env, r.project_id, r.ids.map(Number))),
    ...unstreamed.rows.map((r) => publishOutbox(env, r.project_id, r.ids.map(Number))),
    ...overdue.rows.map((r) => wakeDispatcher(env, r.project_id)),
  ]);
  return {
    handedOver: stranded.rows.reduce((n, r) => n + r.ids.length, 0),
    streamed: unstreamed.rows.reduce((n, r) => n + r.ids.length, 0),
    woken: overdue.rows.length,
  };
}

/** Hourly: handed-over outbox rows older than the retention (deliveries keep their own copy of the event). */
export async function purgeOutbox(db: Db): Promise<number> {
  const result = await db.execute(sql`
    delete from ${outbox} where handed_over_at < now() - ${OUTBOX_RETENTION_DAYS} * interval '1 day'`);
  return result.rowCount ?? 0;
}
