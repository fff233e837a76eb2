// A message a relay node answered 250 for that the edge cannot send (a reason
// only the edge could see: a From domain unverified since the node's lease, the
// plan's limit taken by another node or the API, a field the send schema
// refuses): it still ends in the email log (docs/submission.md, "Answered at
// the node"): its message row, one `failed` row per envelope recipient with
// the reason, and an `email.failed` event each, in one statement. Keyed by the
// id the 250 named, so a batch sent again writes nothing twice.
import { sql } from 'drizzle-orm';
import { emails, outbox, outboundMessages } from '@edgemail/schema';
import type { SubmissionBatchItem } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { emailEventData, eventsByProject, type OutboxRows } from '../emails/events.js';

/** A text[] from a list, as one JSON parameter. */
const textArray = (list: string[]) => sql`array(select jsonb_array_elements_text(${JSON.stringify(list)}::jsonb))`;
const cut = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text);

/** Writes the failed rows (nothing when the id is already in the log); the outbox rows by project. */
export async function recordFailed(db: Db, item: SubmissionBatchItem, reason: string): Promise<Map<string, OutboxRows>> {
  const { message } = item;
  const lower = (list: string[]) => new Set(list.map((a) => (/<([^<>]*)>\s*$/.exec(a)?.[1] ?? a).trim().toLowerCase()));
  const [to, cc] = [lower(message.to), lower(message.cc)];
  const recipients = [...new Set(item.rcpt_to)].map((recipient) => {
    const key = recipient.toLowerCase();
    return { recipient, kind: to.has(key) ? 'to' : cc.has(key) ? 'cc' : 'bcc' };
  });
  const domain = /@([^@<>\s]+)>?\s*$/.exec(message.from)?.[1]?.toLowerCase() ?? 'invalid';
  const { rows } = await db.execute<{ id: string; project_id: string }>(sql`
    with message as (
      insert into ${outboundMessages} (id, project_id, message_id, "from", "to", cc, bcc, reply_to, subject, "text", html, sandbox, origin)
      values (${item.id}, ${item.project_id}, ${`<${item.id}@${domain}>`}, ${cut(message.from, 2000)},
        ${textArray(message.to)}, ${textArray(message.cc)}, ${textArray(message.bcc)}, ${textArray(message.reply_to)},
        ${cut(message.subject.trim() || '(no subject)', 2000)}, ${message.text ?? null}, ${message.html ?? null}, ${item.sandbox}, 'smtp')
      on conflict (id) do nothing
      returning id, project_id, "from", subject, stream
    ), failed as (
      insert into ${emails} (project_id, message_id, recipient, kind, status, error_message)
      select m.project_id, m.id, r.recipient, r.kind, 'failed', ${reason}
      from message m cross join jsonb_to_recordset(${JSON.stringify(recipients)}::jsonb) as r(recipient text, kind text)
      returning id, project_id, recipient, attempts, error_message
    )
    insert into ${outbox} (project_id, event, data)
    select f.project_id, 'email.failed', ${emailEventData({
      id: sql`f.id`, projectId: sql`f.project_id`, from: sql`m."from"`, recipient: sql`f.recipient`, subject: sql`m.subject`,
      status: sql`'failed'`, attempts: sql`f.attempts`, errorMessage: sql`f.error_message`, stream: sql`m.stream`,
    })}
    from failed f cross join message m
    returning id, project_id`);
  return eventsByProject(rows);
}
