// Recording bounces and complaints (docs/bounces.md), whatever their source:
// one statement writes the bounce rows, moves the emails on, suppresses the
// addresses and writes the events, so that none of them is ever without the
// others.
import { sql, type SQL } from 'drizzle-orm';
import { bounces, emails, outbox, outboundMessages } from '@edgemail/schema';
import type { Db } from '../../../db/client.js';
import { eventsByProject } from '../../emails/events.js';
import { bounceEventData } from './event-data.js';
import { suppressAddresses } from '../suppress.js';
import { handedOverUnlessSubscribed } from '../../webhooks/subscribed.js';
import type { BounceReport, BounceType } from './report.js';
import type { OutboxRows } from '../../emails/events.js';

export interface RecordedBounce {
  /** The new `bounces` row. */
  id: string;
  emailId: string;
  type: BounceType;
}

export interface RecordedBounces {
  /** The rows written; a report about an unknown email, or one already recorded, writes none. */
  recorded: RecordedBounce[];
  /** The outbox rows written, by project, for `handOverOutbox`. */
  events: Map<string, OutboxRows>;
}

/**
 * Records each report against its email, all in one statement (one
 * transaction):
 * - a `bounces` row in the email's project, `recipient` = the email's. A
 *   report whose (project, source, `sourceRef`) is already recorded, or twice
 *   in `reports`, is recorded once and the repeat changes nothing (so a
 *   `sourceRef` must name one report about ONE email: a multi-recipient
 *   report's ref carries the recipient or email id). A report naming no
 *   existing email is ignored: the caller has already verified that the
 *   email is the one the report is about (VERP MAC, SES message id);
 * - `hard`: the email moves to `bounced` (`error_message` = the diagnostic,
 *   else the codes), `complaint`: to `complained`, each only from `queued`,
 *   `sending` or `sent` (a row already failed, bounced, complained, never
 *   sent stays as it is; a complaint wins over a hard bounce in one call);
 *   `soft`: the row is left alone;
 * - `hard` and `complaint` suppress the address in the project (reason
 *   `hard_bounce` / `complaint`, `detail` = the diagnostic / Feedback-Type,
 *   `source_email_id`); an existing entry is kept unless it has expired;
 * - `hard` writes an `email.bounced` outbox row, `complaint` an
 *   `email.complained` one (`EmailBounceEventData`), except for source `smtp`:
 *   a refusal during delivery is already reported by `email.failed`. A soft
 *   bounce writes no event (the email is not lost); it is in the bounce list.
 *
 * Signature kept stable: the DSN/ARF parser, the SES webhook and the
 * simulator addresses all call it.
 */
export async function recordBounces(db: Db, reports: BounceReport[]): Promise<RecordedBounces> {
  if (reports.length === 0) return { recorded: [], events: new Map() };
  const { query, read } = bouncesStatement(db, reports);
  const { rows: [row] } = await query;
  return read(row);
}

type BouncesRow = {
  recorded: { id: string; email_id: string; type: BounceType }[] | null;
  events: { id: number; project_id: string; settled: boolean }[] | null;
};

/**
 * `recordBounces` as a statement not yet run (`reports` not empty), and how
 * to read its row, for a caller that runs it in one transaction with another
 * statement (`db.batch`). `onlyIf`, a condition on each report's input row
 * `r` and its email `e`, drops the reports failing it: the simulator records
 * a bounce only when its email's result counted, which the statement before
 * it in the same transaction decided.
 */
export function bouncesStatement(db: Db, reports: BounceReport[], onlyIf: SQL = sql`true`) {
  const input = reports.map((r, i) => ({
    i, email_id: r.emailId, type: r.type, source: r.source, source_ref: r.sourceRef, smtp_code: r.smtpCode,
    status: r.status, diagnostic: r.diagnostic, remote_mta: r.remoteMta, feedback_type: r.feedbackType,
    original_message_id: r.originalMessageId,
  }));
  const query = db.execute<BouncesRow>(sql`
    with input as (
      select * from jsonb_to_recordset(${JSON.stringify(input)}::jsonb) as r(
        i int, email_id uuid, type bounce_type, source text, source_ref text, smtp_code int, status text,
        diagnostic text, remote_mta text, feedback_type text, original_message_id text)
    ),
    reports as (
      -- The same report twice in one call is one row (a null ref never repeats).
      select distinct on (e.project_id, r.source, r.source_ref, case when r.source_ref is null then r.i end)
        r.*, e.project_id, e.recipient
      from input r join ${emails} e on e.id = r.email_id
      where ${onlyIf}
      order by e.project_id, r.source, r.source_ref, case when r.source_ref is null then r.i end, r.i
    ),
    inserted as (
      insert into ${bounces} (project_id, email_id, recipient, type, source, source_ref, smtp_code, status,
                              diagnostic, remote_mta, feedback_type, original_message_id)
      select project_id, email_id, recipient, type, source, source_ref, smtp_code, status,
             diagnostic, remote_mta, feedback_type, original_message_id
      from reports order by i
      on conflict (project_id, source, source_ref) where source_ref is not null do nothing
      returning id, project_id, email_id, recipient, type, source, smtp_code, status, diagnostic, remote_mta,
                feedback_type, original_message_id, created_at,
                -- What a hard bounce says, for the email log and the suppression's detail.
                coalesce(diagnostic, nullif(concat_ws(' ', smtp_code, status), ''), 'bounced') as reason
    ),
    target as (
      select email_id,
             case when bool_or(type = 'complaint') then 'complained' else 'bounced' end::email_status as status,
             (array_agg(reason) filter (where type = 'hard'))[1] as reason
      from inserted where type in ('hard', 'complaint') group by email_id
    ),
    moved as (
      update ${emails} e
      set status = t.status,
          lease_node_id = null,
          next_attempt_at = null,
          error_message = case when t.status = 'bounced' then t.reason else e.error_message end
      from target t
      where e.id = t.email_id and e.status in ('queued', 'sending', 'sent')
      returning e.id, e.status, e.error_message
    ),
    suppressed as (${suppressAddresses(sql`
      select distinct on (project_id, lower(recipient)) project_id, lower(recipient),
             case when type = 'complaint' then 'complaint' else 'hard_bounce' end::suppression_reason,
             case when type = 'complaint' then feedback_type else reason end, email_id
      from inserted where type in ('hard', 'complaint')
      order by project_id, lower(recipient), type = 'complaint' desc`)}
    ),
    reported as (
      select b.*, m."from", m.subject, m.stream, e.attempts,
             coalesce(mv.status, e.status) as email_status, coalesce(mv.error_message, e.error_message) as email_error,
             case when b.type = 'complaint' then 'email.complained' else 'email.bounced' end as event
      from inserted b
      join ${emails} e on e.id = b.email_id
      join ${outboundMessages} m on m.id = e.message_id
      left join moved mv on mv.id = b.email_id
      where b.type in ('hard', 'complaint') and b.source <> 'smtp'
    ),
    events as (
      -- A row no webhook of the project subscribes to is born handed over: no dispatcher call for it (the console stream still gets it).
      insert into ${outbox} (project_id, event, data, handed_over_at)
      select project_id, event, ${bounceEventData({
        id: sql`email_id`, projectId: sql`project_id`, from: sql`"from"`, recipient: sql`recipient`, subject: sql`subject`,
        status: sql`email_status`, attempts: sql`attempts`, errorMessage: sql`email_error`, stream: sql`stream`,
      }, {
        id: sql`id`, type: sql`type`, source: sql`source`, smtpCode: sql`smtp_code`, status: sql`status`,
        diagnostic: sql`diagnostic`, remoteMta: sql`remote_mta`, feedbackType: sql`feedback_type`,
        originalMessageId: sql`original_message_id`, createdAt: sql`created_at`,
      })},
        ${handedOverUnlessSubscribed(sql`reported.project_id`, sql`reported.event`)}
      from reported order by created_at, id
      returning id, project_id, handed_over_at
    )
    select (select json_agg(json_build_object('id', id, 'email_id', email_id, 'type', type)) from inserted) as recorded,
           (select json_agg(json_build_object('id', id, 'project_id', project_id, 'settled', handed_over_at is not null)) from events) as events`);

  const read = (row: BouncesRow | undefined): RecordedBounces => ({
    recorded: (row?.recorded ?? []).map((r) => ({ id: r.id, emailId: r.email_id, type: r.type })),
    events: eventsByProject(row?.events ?? []),
  });
  return { query, read };
}
