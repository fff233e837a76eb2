// Replay: every event of a time range sent again to one webhook, as new
// deliveries (`replay_id` naming the replay), for a receiver that lost them or
// a webhook enabled again after a time disabled. The events come from the
// outbox, which keeps handed-over events REPLAY_MAX_DAYS days (sweep.ts); only
// those the webhook takes now (its current event types, sender filters and the
// choice of a routing rule) are sent, in the order they happened.
import { sql } from 'drizzle-orm';
import { outbox, webhookDeliveries, webhooks } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { conflict, invalid, notFound } from '../errors.js';
import { REPLAY_MAX_DAYS, REPLAY_MAX_EVENTS, type ReplayWebhookInput } from '../../contracts/webhook.js';
import { orderingKeyOf, takesEvent } from './queue.js';

const DAY_MS = 86_400_000;

/** The range's own bounds, before any query: 400 naming the field and the bound. */
function checkRange(since: Date, until: Date, now: Date) {
  if (until <= since) throw invalid('until: must be after since', { until: 'must be after since' });
  if (until.getTime() - since.getTime() > REPLAY_MAX_DAYS * DAY_MS) {
    const problem = `the range may span at most ${REPLAY_MAX_DAYS} days`;
    throw invalid(`until: ${problem}`, { until: problem });
  }
  if (since.getTime() < now.getTime() - REPLAY_MAX_DAYS * DAY_MS) {
    const problem = `must be within the last ${REPLAY_MAX_DAYS} days (events are kept that long)`;
    throw invalid(`since: ${problem}`, { since: problem });
  }
}

/**
 * Queues one delivery per event of `[since, until)` the webhook takes, each
 * due at once (in event order), with attempts of its own. One statement after
 * locking the webhook row, so two replays of one webhook cannot both start:
 * 409 while an earlier replay still has a pending delivery, 409 for a
 * disabled webhook, 400 when the range holds more than REPLAY_MAX_EVENTS.
 * The caller wakes the dispatcher.
 */
export async function replayWebhook(db: Db, projectId: string, webhookId: string, input: ReplayWebhookInput) {
  const since = new Date(input.since);
  const until = new Date(input.until);
  checkRange(since, until, new Date());
  const replayId = crypto.randomUUID();
  const [, { rows: [row] }] = await db.batch([
    // Serializes replays of one webhook: the next statement reads what an earlier one committed.
    db.execute(sql`select 1 from ${webhooks} where id = ${webhookId} and project_id = ${projectId} for update`),
    db.execute<{ found: boolean; disabled: boolean; running: boolean; n: number; queued: number }>(sql`
      with w as (
        select * from ${webhooks} where id = ${webhookId} and project_id = ${projectId}
      ), running as (
        select exists (select 1 from ${webhookDeliveries} where webhook_id = ${webhookId} and status = 'pending' and replay_id is not null) as r
      ), c as (
        select o.id, o.event, o.data, o.created_at, o.webhook_ids from ${outbox} o
        where o.project_id = ${projectId} and o.created_at >= ${since.toISOString()}::timestamptz and o.created_at < ${until.toISOString()}::timestamptz
          -- Handed over, so not also on its way by the fan-out; and the index's way in (handed over at or after it happened).
          and o.handed_over_at >= ${since.toISOString()}::timestamptz
      ), e as (
        select c.* from c, w
        where ${takesEvent('w', 'c')}
          -- A routing rule that chose webhooks for this event (outbox.webhook_ids): only those.
          and coalesce(w.id = any(c.webhook_ids), true)
        order by c.id
        limit ${REPLAY_MAX_EVENTS + 1}
      ), counted as (
        select count(*)::int as n from e
      ), queued as (
        insert into ${webhookDeliveries} (webhook_id, project_id, event, event_at, data, attempts, next_attempt_at, ordering_key, event_seq, replay_id)
        select w.id, w.project_id, e.event, e.created_at, e.data, 0,
          -- Claimed in the order the events happened.
          now() + (row_number() over (order by e.id)) * interval '1 microsecond',
          ${orderingKeyOf('w', 'e')}, e.id, ${replayId}::uuid
        from e, w
        where w.disabled_at is null and not (select r from running) and (select n from counted) <= ${REPLAY_MAX_EVENTS}
        returning 1
      )
      select exists (select 1 from w) as found, coalesce((select disabled_at is not null from w), false) as disabled,
        (select r from running) as running, (select n from counted) as n, (select count(*)::int from queued) as queued`),
  ]);
  if (!row?.found) throw notFound('webhook not found');
  if (row.disabled) throw conflict('webhook is disabled: enable it first (POST /api/v1/webhooks/{id}/enable)');
  if (row.running) throw conflict('a replay to this webhook is still running: wait until its deliveries are done');
  if (row.n > REPLAY_MAX_EVENTS) {
    const problem = `the range holds more than the ${REPLAY_MAX_EVENTS} events a replay may send; narrow it`;
    throw invalid(`since, until: ${problem}`, { since: problem, until: problem });
  }
  return { replay: { id: replayId, webhook_id: webhookId, since: since.toISOString(), until: until.toISOString(), events: row.queued } };
}
