// Recording what relay nodes report (docs/sending.md, "Relay protocol:
// outbound"): one statement for the whole report, so that every accepted
// result's attempt record, status change, suppression and outbox row commit
// together, whatever the number of results.
import { sql } from 'drizzle-orm';
import { bounces, emailAttempts, emails, outbox, outboundMessages } from '@edgemail/schema';
import { enhancedCode, formatEnhancedCode, type Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import type { OutboundResultInput } from '../../contracts/relay-outbound.js';
import { ageText, retryDelay } from './backoff.js';
import { emailEventData, eventsByProject } from '../emails/events.js';
import { isHardBounce } from './hard-bounce.js';
import { suppressAddresses } from './suppress.js';
import { handedOverUnlessSubscribed } from '../webhooks/subscribed.js';
import type { OutboxRows } from '../emails/events.js';

export interface RecordedResults {
  /** Email ids whose result counted, in the order reported. */
  accepted: string[];
  /** Email ids whose result did not (the node no longer held that lease), in the order reported. */
  stale: string[];
  /** The outbox rows written, by project, for the hand-over. */
  events: Map<string, OutboxRows>;
}

type Settings = Pick<Config, 'outbound.retry_delay' | 'outbound.max_age'>;

/**
 * A result counts only when its recipient is `sending`, leased to `nodeId`,
 * and at the attempt the result names (`attempts = attempt`): a lease that
 * ran out and was claimed again, a result reported twice, or another node's
 * recipient is stale and changes nothing. The same recipient twice in one
 * report: the first matching result counts, the other is stale.
 *
 * For the results that count, in one statement (one transaction):
 * - every one: an `email_attempts` row, `node_id` = this node, the lease let go,
 *   `smtp_reply` = the reply when the server gave one;
 * - `sent`: status `sent`, `sent_at`, outbox `email.sent`;
 * - `failed`: status `failed`, `error_message` = the reply, outbox
 *   `email.failed`; a hard bounce (`isHardBounce`) also suppresses the
 *   address in the project (`hard_bounce`, `source_email_id`, the reply as
 *   `detail`; an existing entry is kept unless it has expired); a refusal
 *   with a 5xx code is also a `bounces` row (source `smtp`, ref
 *   `<email id>/<attempt>`): `hard` when `isHardBounce`, else `soft` (a
 *   policy refusal or a full mailbox says nothing against the address;
 *   docs/bounces.md). Its event is the `email.failed` above;
 * - `deferred`: `queued` again, due after `retry_delay × 2^(earlier
 *   deferrals)` (at most an hour), unless the send is older than
 *   `outbound.max_age`: then `failed` with `expired after <age>: <reply>`
 *   and `email.failed`.
 *
 * The recipient rows are locked (`FOR UPDATE`) before they are judged, so a
 * concurrent claim (which skips locked rows) or a repeated report waits or
 * passes; a report that waited judges the row as the other left it.
 */
export async function recordResults(db: Db, settings: Settings, nodeId: string, results: OutboundResultInput[]): Promise<RecordedResults> {
  const { query, read } = resultsStatement(db, settings, nodeId, results);
  const { rows: [row] } = await query;
  return read(row);
}

type ResultsRow = { accepted: number[] | null; events: { id: number; project_id: string; settled: boolean }[] | null };

/**
 * `recordResults` as a statement not yet run, and how to read its row: for a
 * caller that runs it in one transaction with another (`db.batch`), as the
 * simulator does with the bounce its result implies.
 */
export function resultsStatement(db: Db, settings: Settings, nodeId: string, results: OutboundResultInput[]) {
  const input = results.map((r, i) => ({
    i, email_id: r.email_id, attempt: r.attempt, outcome: r.outcome, smtp_code: r.smtp_code, reply: r.reply,
    server: r.server, started_at: r.started_at, duration_ms: r.duration_ms, hard_bounce: isHardBounce(r),
    enhanced: formatted(enhancedCode(r.reply)),
  }));
  const query = db.execute<ResultsRow>(sql`
    with input as (
      select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb) as r(
        i int, email_id uuid, attempt int, outcome text, smtp_code int, reply text, server text,
        started_at timestamptz, duration_ms int, hard_bounce boolean, enhanced text)
    ),
    locked as (
      -- The row as it is once locked (not as the statement's snapshot saw it).
      -- A scheduled send's age (outbound.max_age) counts from its send_at, when it became due.
      select e.id, e.project_id, e.message_id, e.recipient, e.attempts,
        greatest(e.created_at, (select m.send_at from ${outboundMessages} m where m.id = e.message_id)) as due_from
      from ${emails} e
      where e.id in (select email_id from input) and e.status = 'sending' and e.lease_node_id = ${nodeId}
      for update
    ),
    matched as (
      select distinct on (l.id) r.*, l.project_id, l.message_id, l.recipient, l.attempts,
        floor(extract(epoch from now() - l.due_from))::bigint as age_s,
        now() - l.due_from >= ${settings['outbound.max_age']} * interval '1 millisecond' as too_old,
        (select count(*) from ${emailAttempts} a where a.email_id = l.id and a.outcome = 'deferred')::int as deferrals
      from input r join locked l on l.id = r.email_id and l.attempts = r.attempt
      order by l.id, r.i
    ),
    decided as (
      select mt.*, m."from", m.subject, m.stream,
        case
          when mt.outcome = 'sent' then 'sent'
          when mt.outcome = 'failed' or mt.too_old then 'failed'
          else 'queued'
        end::email_status as status,
        case
          when mt.outcome = 'failed' then mt.reply
          when mt.outcome = 'deferred' and mt.too_old then 'expired after ' || ${ageText(sql`mt.age_s`)} || ': ' || mt.reply
        end as error_message
      from matched mt join ${outboundMessages} m on m.id = mt.message_id
    ),
    moved as (
      update ${emails} e
      set status = d.status,
          lease_node_id = null,
          node_id = ${nodeId},
          next_attempt_at = case when d.status = 'queued' then now() + ${retryDelay(settings['outbound.retry_delay'], sql`d.deferrals`)} end,
          smtp_reply = case when d.smtp_code is not null then d.reply else e.smtp_reply end,
          error_message = d.error_message,
          sent_at = case when d.status = 'sent' then now() else e.sent_at end
      from decided d
      where e.id = d.email_id
    ),
    attempted as (
      insert into ${emailAttempts} (email_id, attempt, node_id, outcome, smtp_code, reply, server, started_at, duration_ms)
      select email_id, attempt, ${nodeId}, outcome, smtp_code, reply, server, started_at, duration_ms from decided
      on conflict (email_id, attempt) do nothing
    ),
    suppressed as (${suppressAddresses(sql`
      select distinct on (project_id, lower(recipient)) project_id, lower(recipient), 'hard_bounce'::suppression_reason, reply, email_id
      from decided where status = 'failed' and outcome = 'failed' and hard_bounce
      order by project_id, lower(recipient), i`)}
    ),
    bounced as (
      insert into ${bounces} (project_id, email_id, recipient, type, source, source_ref, smtp_code, status, diagnostic, remote_mta)
      select project_id, email_id, recipient, case when hard_bounce then 'hard' else 'soft' end::bounce_type, 'smtp',
             email_id || '/' || attempt, smtp_code, enhanced, reply, server
      from decided where status = 'failed' and outcome = 'failed' and smtp_code >= 500
      on conflict (project_id, source, source_ref) where source_ref is not null do nothing
    ),
    events as (
      -- A row no webhook of the project subscribes to is born handed over: no dispatcher call for it (the console stream still gets it).
      insert into ${outbox} (project_id, event, data, handed_over_at)
      select project_id, 'email.' || status::text, ${emailEventData({
        id: sql`email_id`, projectId: sql`project_id`, from: sql`"from"`, recipient: sql`recipient`, subject: sql`subject`,
        status: sql`status`, attempts: sql`attempts`, errorMessage: sql`error_message`, stream: sql`stream`,
      })},
        ${handedOverUnlessSubscribed(sql`decided.project_id`, sql`'email.' || decided.status::text`)}
      from decided where status in ('sent', 'failed')
      returning id, project_id, handed_over_at
    )
    select (select json_agg(i) from decided) as accepted,
           (select json_agg(json_build_object('id', id, 'project_id', project_id, 'settled', handed_over_at is not null)) from events) as events`);

  const read = (row: ResultsRow | undefined): RecordedResults => {
    const counted = new Set(row?.accepted ?? []);
    const answer: RecordedResults = { accepted: [], stale: [], events: eventsByProject(row?.events ?? []) };
    input.forEach((r) => (counted.has(r.i) ? answer.accepted : answer.stale).push(r.email_id));
    return answer;
  };
  return { query, read };
}

const formatted = (code: ReturnType<typeof enhancedCode>): string | null => (code ? formatEnhancedCode(code) : null);
