// The delivery queue in PostgreSQL, the dispatcher's only state: which
// deliveries exist, which are due, and what each attempt did. Every claim is
// one atomic statement with a lease, so an outbox row becomes deliveries once,
// and a delivery whose dispatcher died mid-attempt is attempted again when its
// lease ends, never twice at once.
import { sql } from 'drizzle-orm';
import { outbox, webhookAttempts, webhookDeliveries, webhooks } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { AttemptOutcome } from './attempt.js';
import { chosenByInboundRule } from '../inbound-rules/webhook-choice.js';

/** A delivery claimed for one attempt, with what the attempt needs. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  /** The outbox row it was made from, for a first attempt out of `fanOut`. */
  outboxId: number | null;
  event: string;
  eventAt: Date;
  data: unknown;
  /** The number of the attempt now being made (1 for the first). */
  attempt: number;
  url: string;
  secretSealed: string;
}

type ClaimedRow = { id: string; webhook_id: string; outbox_id: string | number | null; event: string; event_at: string | Date; data: unknown; attempts: number; url: string; secret_sealed: string };

const claimed = (rows: ClaimedRow[]): ClaimedDelivery[] => rows.map((r) => ({
  id: r.id, webhookId: r.webhook_id, outboxId: r.outbox_id === null ? null : Number(r.outbox_id), event: r.event, eventAt: new Date(r.event_at), data: r.data, attempt: r.attempts, url: r.url, secretSealed: r.secret_sealed,
}));

// The sender a filter is matched against: the bare address, lower case (a
// display-name form `Ann <ann@example.org>` is reduced to its address).
const senderOf = (data: unknown) =>
  sql`lower(coalesce(substring(${data}->>'sender' from '<([^>]*)>'), ${data}->>'sender', ''))`;

/**
 * Marks the project's outbox rows handed over and creates a delivery per
 * subscribed webhook whose filters match, each claimed for its first attempt.
 * Rows already handed over (by the sweep, or an earlier call) yield nothing.
 */
export async function fanOut(db: Db, projectId: string, outboxIds: number[], leaseMs: number): Promise<ClaimedDelivery[]> {
  const sender = senderOf(sql.raw('c.data'));
  const { rows } = await db.execute<ClaimedRow>(sql`
    with c as (
      update ${outbox} set handed_over_at = now()
      where id = any(${`{${outboxIds.join(',')}}`}::bigint[]) and project_id = ${projectId} and handed_over_at is null
      returning id, project_id, event, data, created_at
    ), inserted as (
      insert into ${webhookDeliveries} (webhook_id, project_id, outbox_id, event, event_at, data, attempts, next_attempt_at)
      select w.id, c.project_id, c.id, c.event, c.created_at, c.data, 1, now() + ${leaseMs} * interval '1 millisecond'
      from c join ${webhooks} w on w.project_id = c.project_id
      where (c.event = any(w.events) or '*' = any(w.events))
        -- A project event (project.*) has no sender: sender filters do not apply to it.
        and (cardinality(w.filters) = 0 or c.event like 'project.%' or ${sender} = any(w.filters)
             or '*@' || substring(${sender} from '@([^@]*)$') = any(w.filters))
        and ${chosenByInboundRule('w', 'c')}
      on conflict (webhook_id, outbox_id) do nothing
      returning id, webhook_id, outbox_id, event, event_at, data, attempts
    )
    select i.id, i.webhook_id, i.outbox_id, i.event, i.event_at, i.data, i.attempts, w.url, w.secret_sealed
    from inserted i join ${webhooks} w on w.id = i.webhook_id`);
  return claimed(rows);
}

/**
 * Claims up to `limit` of the project's due deliveries for their next attempt.
 * Deliveries whose attempts ran out while in flight (a dispatcher that died on
 * the last one) are marked failed instead.
 */
export async function claimDue(db: Db, projectId: string, opts: { maxAttempts: number; leaseMs: number; limit: number }): Promise<ClaimedDelivery[]> {
  const [, { rows }] = await db.batch([
    db.execute(sql`
      update ${webhookDeliveries} set status = 'failed', next_attempt_at = null, completed_at = now(),
        last_error = coalesce(last_error, 'attempt interrupted')
      where project_id = ${projectId} and status = 'pending' and next_attempt_at <= now() and attempts >= ${opts.maxAttempts}`),
    db.execute<ClaimedRow>(sql`
      update ${webhookDeliveries} d set attempts = d.attempts + 1, next_attempt_at = now() + ${opts.leaseMs} * interval '1 millisecond'
      from ${webhooks} w
      where w.id = d.webhook_id and d.id in (
        select id from ${webhookDeliveries}
        where project_id = ${projectId} and status = 'pending' and next_attempt_at <= now() and attempts < ${opts.maxAttempts}
        order by next_attempt_at
        limit ${opts.limit}
        for update skip locked)
      returning d.id, d.webhook_id, d.outbox_id, d.event, d.event_at, d.data, d.attempts, w.url, w.secret_sealed`),
  ]);
  return claimed(rows);
}

export interface AttemptRecord { delivery: ClaimedDelivery; outcome: AttemptOutcome }

/**
 * Records attempts and moves each delivery on: succeeded, failed when its
 * attempts ran out, else due again after `retryDelayMs`. A delivery whose
 * attempt was since claimed again (its lease ran out) or that was deleted
 * with its webhook is left alone. Answers when the project's next delivery is
 * due, for the alarm.
 */
export async function recordAttempts(db: Db, projectId: string, records: AttemptRecord[], opts: { maxAttempts: number; retryDelayMs: number }): Promise<Date | null> {
  const statements = records.flatMap(({ delivery, outcome }) => {
    const done = outcome.ok || delivery.attempt >= opts.maxAttempts;
    const status = outcome.ok ? 'succeeded' : done ? 'failed' : 'pending';
    return [
      // From the delivery row, so an attempt of a deleted delivery inserts nothing.
      db.execute(sql`
        insert into ${webhookAttempts} (delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt)
        select id, ${delivery.attempt}, ${outcome.startedAt.toISOString()}, ${outcome.durationMs}, ${outcome.statusCode}, ${outcome.error}, ${outcome.responseExcerpt}
        from ${webhookDeliveries} where id = ${delivery.id} and attempts = ${delivery.attempt}
        on conflict (delivery_id, attempt) do nothing`),
      db.execute(sql`
        update ${webhookDeliveries} set
          status = ${status},
          next_attempt_at = ${done ? null : sql`now() + ${opts.retryDelayMs} * interval '1 millisecond'`},
          completed_at = ${done ? sql`now()` : null},
          last_status_code = ${outcome.statusCode},
          last_error = ${outcome.error}
        where id = ${delivery.id} and attempts = ${delivery.attempt} and status = 'pending'`),
    ];
  });
  const results = await db.batch([...statements, nextDue(db, projectId)] as [ReturnType<typeof nextDue>]);
  return dueAt(results.at(-1)!.rows);
}

const nextDue = (db: Db, projectId: string) => db.execute<{ at: string | Date | null }>(sql`
  select min(next_attempt_at) as at from ${webhookDeliveries} where project_id = ${projectId} and status = 'pending'`);

const dueAt = (rows: { at: string | Date | null }[]) => (rows[0]?.at ? new Date(rows[0].at) : null);

/** When the project's next delivery is due (null when none is pending). */
export async function nextDueAt(db: Db, projectId: string): Promise<Date | null> {
  return dueAt((await nextDue(db, projectId)).rows);
}
