// Claimed recipients that were not handed out after all: failed (the job can
// never be made: no DKIM key, a missing attachment) with an `email.failed`
// event in the same statement, or returned to the queue (storage did not
// answer this time). Neither counts as a delivery attempt: `attempts` goes
// back down.
import { sql } from 'drizzle-orm';
import { emails, outbox, outboundMessages } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { emailEventData, eventsByProject } from '../emails/events.js';
import type { JobFailure } from './jobs.js';
import type { OutboxRows } from '../emails/events.js';

/**
 * Fails the recipients (still leased to `nodeId`) with their problem as
 * `error_message`, and writes their `email.failed` events; answers the outbox
 * rows by project for the hand-over.
 */
export async function failClaimed(db: Db, nodeId: string, failures: JobFailure[]): Promise<Map<string, OutboxRows>> {
  if (!failures.length) return new Map();
  const { rows } = await db.execute<{ id: string; project_id: string }>(sql`
    with input as (
      select * from jsonb_to_recordset(${JSON.stringify(failures.map(({ id, problem }) => ({ id, problem })))}::jsonb) as f(id uuid, problem text)
    ),
    failed as (
      update ${emails} e
      set status = 'failed', error_message = f.problem, attempts = greatest(e.attempts - 1, 0), next_attempt_at = null, lease_node_id = null
      from input f
      where e.id = f.id and e.status = 'sending' and e.lease_node_id = ${nodeId}
      returning e.id, e.project_id, e.message_id, e.recipient, e.attempts, e.error_message
    )
    insert into ${outbox} (project_id, event, data)
    select f.project_id, 'email.failed', ${emailEventData({
      id: sql`f.id`, projectId: sql`f.project_id`, from: sql`m."from"`, recipient: sql`f.recipient`, subject: sql`m.subject`,
      status: sql`'failed'`, attempts: sql`f.attempts`, errorMessage: sql`f.error_message`, stream: sql`m.stream`,
    })}
    from failed f join ${outboundMessages} m on m.id = f.message_id
    returning id, project_id`);
  return eventsByProject(rows);
}

/** Returns the recipients (still leased to `nodeId`) to the queue, due after `outbound.retry_delay`. */
export async function releaseClaimed(db: Db, settings: Pick<Config, 'outbound.retry_delay'>, nodeId: string, ids: string[]): Promise<void> {
  if (!ids.length) return;
  await db.execute(sql`
    update ${emails}
    set status = 'queued', attempts = greatest(attempts - 1, 0), lease_node_id = null,
        next_attempt_at = now() + ${settings['outbound.retry_delay']} * interval '1 millisecond'
    where id = any(${`{${ids.join(',')}}`}::uuid[]) and status = 'sending' and lease_node_id = ${nodeId}`);
}
