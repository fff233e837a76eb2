// The delivery queue in PostgreSQL, the dispatcher's only state: which
// deliveries exist, which are due, and what each attempt did. Every claim is
// one atomic statement with a lease, so an outbox row becomes deliveries once,
// and a delivery whose dispatcher died mid-attempt is attempted again when its
// lease ends, never twice at once.
import { sql } from 'drizzle-orm';
import { outbox, projects, webhookAttempts, webhookDeliveries, webhooks } from '@edgemail/schema';
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
 * Whether webhook `w` (an alias) takes the event `c` (an alias with `event`
 * and `data`): subscribed to its type, its sender filters matching. Used by
 * the fan-out and by replays, so both choose alike.
 */
export function takesEvent(w: string, c: string) {
  const [W, C] = [sql.raw(w), sql.raw(c)];
  const sender = senderOf(sql.raw(`${c}.data`));
  return sql`(${C}.event = any(${W}.events) or '*' = any(${W}.events))
        -- A project or webhook event (project.*, webhook.*) has no sender: sender filters do not apply to it.
        and (cardinality(${W}.filters) = 0 or ${C}.event like 'project.%' or ${C}.event like 'webhook.%' or ${sender} = any(${W}.filters)
             or '*@' || substring(${sender} from '@([^@]*)$') = any(${W}.filters))`;
}

/**
 * The ordering key of event `c` for webhook `w`: the email (`email.*`) or
 * inbound message (`inbound.received`) it is about, for an ordered webhook;
 * null (not ordered) otherwise and for project.* and webhook.* events.
 */
export function orderingKeyOf(w: string, c: string) {
  const [W, C] = [sql.raw(w), sql.raw(c)];
  return sql`case when ${W}.ordered and (${C}.event like 'email.%' or ${C}.event = 'inbound.received') then ${C}.data->>'id' end`;
}

/**
 * True while delivery `d` (an alias) waits for an earlier event of its key
 * still pending to the same webhook. An unordered delivery (no key) never waits.
 */
export const heldBack = (d: string) => {
  const D = sql.raw(d);
  return sql`(${D}.ordering_key is not null and exists (
    select 1 from ${webhookDeliveries} p
    where p.webhook_id = ${D}.webhook_id and p.ordering_key = ${D}.ordering_key and p.status = 'pending' and p.event_seq < ${D}.event_seq))`;
};

/**
 * Marks the project's outbox rows handed over and creates a delivery per
 * subscribed webhook whose filters match, each claimed for its first attempt.
 * A disabled webhook gets none. A delivery to an ordered webhook is made
 * unclaimed (due now) and counted in `queued`: the due loop sends it once no
 * earlier event of its key is pending. Rows already handed over (by the
 * sweep, or an earlier call) yield nothing.
 */
export async function fanOut(db: Db, projectId: string, outboxIds: number[], leaseMs: number): Promise<{ claimed: ClaimedDelivery[]; queued: number }> {
  const { rows } = await db.execute<ClaimedRow & { claimed: boolean }>(sql`
    with c as (
      update ${outbox} set handed_over_at = now()
      where id = any(${`{${outboxIds.join(',')}}`}::bigint[]) and project_id = ${projectId} and handed_over_at is null
      returning id, project_id, event, data, created_at
    ), inserted as (
      insert into ${webhookDeliveries} (webhook_id, project_id, outbox_id, event, event_at, data, attempts, next_attempt_at, ordering_key, event_seq)
      select w.id, c.project_id, c.id, c.event, c.created_at, c.data,
        case when w.ordered then 0 else 1 end,
        case when w.ordered then now() else now() + ${leaseMs} * interval '1 millisecond' end,
        ${orderingKeyOf('w', 'c')}, c.id
      from c join ${webhooks} w on w.project_id = c.project_id
      where w.disabled_at is null and ${takesEvent('w', 'c')}
        and ${chosenByInboundRule('w', 'c')}
      on conflict (webhook_id, outbox_id) do nothing
      returning id, webhook_id, outbox_id, event, event_at, data, attempts
    )
    select i.id, i.webhook_id, i.outbox_id, i.event, i.event_at, i.data, i.attempts, w.url, w.secret_sealed, i.attempts > 0 as claimed
    from inserted i join ${webhooks} w on w.id = i.webhook_id`);
  const made = claimed(rows.filter((r) => r.claimed));
  return { claimed: made, queued: rows.length - made.length };
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
      where w.id = d.webhook_id and w.disabled_at is null and d.id in (
        select id from ${webhookDeliveries} q
        where project_id = ${projectId} and status = 'pending' and next_attempt_at <= now() and attempts < ${opts.maxAttempts}
          and not ${heldBack('q')}
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
 * with its webhook is left alone. Each webhook's failure span is lengthened
 * or ended (`webhooks.failing_since`, `consecutive_failures`) by
 * `updateSpans`, which answers the webhooks whose span reached
 * `webhook.disable_after` (the caller disables them). Answers when the
 * project's next delivery is due, for the alarm.
 */
export async function recordAttempts(
  db: Db, projectId: string, records: AttemptRecord[],
  opts: { maxAttempts: number; retryDelayMs: number; disableAfterMs: number; disableAfterFailures: number },
): Promise<{ next: Date | null; updateSpans: () => Promise<FailingWebhook[]> }> {
  const statements = records.flatMap(({ delivery, outcome }) => {
    const done = outcome.ok || delivery.attempt >= opts.maxAttempts;
    const status = outcome.ok ? 'succeeded' : done ? 'failed' : 'pending';
    return [
      // From the delivery row, so an attempt of a deleted delivery inserts nothing. The row is
      // locked (key share) as it is read: a webhook being deleted at this moment either waits
      // for this record (and then deletes it with the delivery) or, once its delete commits,
      // leaves nothing to read; never an insert whose delivery vanished under its foreign key.
      db.execute(sql`
        with d as (select id from ${webhookDeliveries} where id = ${delivery.id} and attempts = ${delivery.attempt} for key share)
        insert into ${webhookAttempts} (delivery_id, attempt, started_at, duration_ms, status_code, error, response_excerpt)
        select id, ${delivery.attempt}, ${outcome.startedAt.toISOString()}, ${outcome.durationMs}, ${outcome.statusCode}, ${outcome.error}, ${outcome.responseExcerpt}
        from d
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
  const spans = failureSpans(records).map((span) => db.execute<FailingWebhook>(sql`
    update ${webhooks} set
      consecutive_failures = ${span.reset ? sql`${span.failures}` : sql`consecutive_failures + ${span.failures}`},
      failing_since = ${span.failures === 0 ? sql`null` : span.reset ? sql`${span.firstFailureAt}::timestamptz` : sql`coalesce(failing_since, ${span.firstFailureAt}::timestamptz)`}
    where id = ${span.webhookId} and disabled_at is null
    returning id, project_id, url, consecutive_failures, failing_since, (select name from ${projects} p where p.id = project_id) as project_name,
      (${opts.disableAfterMs} > 0 and consecutive_failures >= ${opts.disableAfterFailures}
       and failing_since <= now() - ${opts.disableAfterMs} * interval '1 millisecond') as due`));
  const results = await db.batch([...statements, nextDue(db, projectId)] as [ReturnType<typeof nextDue>]);
  // Each span on its own, after the batch: a transaction holding a delivery row and then asking for its
  // webhook's row would deadlock with a delete of that webhook (webhook row first, then its deliveries).
  // Called once the alarm is set from `next` (a restart in between must not lose the retry's alarm).
  const updateSpans = async () => (await Promise.all(spans)).flatMap((r) => r.rows).filter((w) => w.due);
  return { next: dueAt(results.at(-1)!.rows), updateSpans };
}

/** A webhook whose failure span the last records lengthened; `due` when it is to be disabled. */
export type FailingWebhook = {
  id: string;
  project_id: string;
  url: string;
  project_name: string;
  consecutive_failures: number;
  failing_since: string | Date | null;
  due: boolean;
};

/**
 * Per webhook, what a batch of attempts does to its failure span: a success
 * ends it (`reset`, then counting the failures after the last success), a
 * failure lengthens it (from its first failed attempt's start).
 */
function failureSpans(records: AttemptRecord[]) {
  const spans = new Map<string, { webhookId: string; reset: boolean; failures: number; firstFailureAt: string | null }>();
  for (const { delivery, outcome } of [...records].sort((a, b) => a.outcome.startedAt.getTime() - b.outcome.startedAt.getTime())) {
    const span = spans.get(delivery.webhookId) ?? { webhookId: delivery.webhookId, reset: false, failures: 0, firstFailureAt: null };
    if (outcome.ok) Object.assign(span, { reset: true, failures: 0, firstFailureAt: null });
    else {
      span.failures++;
      span.firstFailureAt ??= outcome.startedAt.toISOString();
    }
    spans.set(delivery.webhookId, span);
  }
  return [...spans.values()];
}

// Held-back deliveries are due but not sendable: they never set the alarm.
const nextDue = (db: Db, projectId: string) => db.execute<{ at: string | Date | null }>(sql`
  select min(next_attempt_at) as at from ${webhookDeliveries} d
  where project_id = ${projectId} and status = 'pending' and not ${heldBack('d')}`);

const dueAt = (rows: { at: string | Date | null }[]) => (rows[0]?.at ? new Date(rows[0].at) : null);

/** When the project's next delivery is due (null when none is pending). */
export async function nextDueAt(db: Db, projectId: string): Promise<Date | null> {
  return dueAt((await nextDue(db, projectId)).rows);
}
