// Accepting one send or a batch (docs/sending.md, "The path of one message"):
// checks that need the database, attachments to R2, then one transaction
// (`db.batch`) that takes the project's send lock, writes the messages only
// if the plan's limits and the idempotency key allow, writes their recipient
// rows and the idempotency record, and reads back the verdict.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { emails, idempotencyKeys, outboundMessages, plans, projects, suppressions } from '@edgemail/schema';
import { fromBase64, type Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { projectLock } from '../../db/project-lock.js';
import { invalid, rateLimited } from '../errors.js';
import type { SendMessageInput } from '../../contracts/send.js';
import { domainOfAddress, judgeSendingDomain, sendingDomainsQuery } from '../domains/sendable.js';
import { findAnswerQuery, forgetExpired, keyIsFree, recordAnswer, replayOrConflict, storedAnswer, storedBody, storedKey, type IdempotentRequest } from '../idempotency/keys.js';
import { limitReached, usedIn, withinLimits, type PlanUsageRow } from './limits.js';
import { answerOf, attachmentBytes, countable, emailRows, messageRow, planMessage, recipientsOf, type MessagePlan } from './plan.js';

export interface SendContext {
  db: Db;
  store: R2Bucket;
  config: Pick<Config, 'send.max_attachment_bytes'>;
  projectId: string;
  /** Sent with a sandbox key: rows are `captured`. */
  sandbox: boolean;
  idempotency?: IdempotentRequest;
}

/** One message of the request, and how a problem with it is named (`from`, `messages.3.from`). */
export interface SendItem { input: SendMessageInput; field: (name: string) => string }

/** Always a 201: only accepted sends are recorded under a key, so a replay is one too. */
export interface SendAnswer<T> {
  body: T;
  /** The first answer to this Idempotency-Key, given again; nothing was written. */
  replayed: boolean;
}

/** 400 naming the field, worded as the schema's validation failures are. */
const fieldProblem = (field: string, problem: string) => invalid(`invalid request body: ${field}: ${problem}`, { [field]: problem });

/**
 * Writes the messages (all or none) and answers `shape(results)` (201);
 * throws 400 (domain, attachments), 409 (key used with another body) or 429
 * (plan limit). A replay answers the stored first answer.
 */
export async function sendMessages<T>(ctx: SendContext, items: SendItem[], shape: (results: ReturnType<typeof answerOf>[]) => T): Promise<SendAnswer<T>> {
  const { db, projectId } = ctx;
  const max = ctx.config['send.max_attachment_bytes'];
  for (const { input, field } of items) {
    const bytes = attachmentBytes(input);
    if (bytes > max) throw fieldProblem(field('attachments'), `must be at most ${max} bytes together, decoded (these are ${bytes})`);
  }

  const fromKeys = [...new Set(items.map((i) => i.input.from.key))];
  const recipientKeys = [...new Set(items.flatMap((i) => recipientsOf(i.input).map((r) => r.mailbox.key)))];
  // Every read before the write in one round trip: the from-domains, the suppressed recipients, a stored answer.
  const domainNames = [...new Set(fromKeys.map(domainOfAddress).filter((n): n is string => n !== null))];
  const [domainRows, suppressedRows, storedRows] = await db.batch([
    sendingDomainsQuery(db, projectId, domainNames),
    db.select({ address: suppressions.address }).from(suppressions)
      .where(and(eq(suppressions.projectId, projectId), inArray(suppressions.address, recipientKeys))),
    findAnswerQuery(db, projectId, ctx.idempotency ? storedKey(ctx.idempotency) : null),
  ]);
  const stored = storedAnswer(storedRows[0]);
  if (stored && ctx.idempotency) return { body: replayOrConflict(stored, ctx.idempotency).body as T, replayed: true };

  const rowByName = new Map(domainRows.map((r) => [r.name, r]));
  const verdicts = new Map(fromKeys.map((key) => [key, judgeSendingDomain(key, rowByName.get(domainOfAddress(key) ?? ''))] as const));
  const fromDomains = items.map(({ input, field }) => {
    const verdict = verdicts.get(input.from.key)!;
    if (!verdict.ok) throw fieldProblem(field('from'), verdict.problem);
    return { id: verdict.domain.id, name: verdict.domain.name };
  });
  const suppressed = new Set(suppressedRows.map((r) => r.address));
  const createdAt = new Date();
  const planned = items.map(({ input }, i) =>
    planMessage(input, { projectId, domain: fromDomains[i]!, suppressed, sandbox: ctx.sandbox, createdAt }));
  const body = shape(planned.map(answerOf));

  // Bytes first: a message is never visible (nor claimable) before its attachments are.
  await putAttachments(ctx.store, planned);
  let verdict: Verdict;
  try {
    verdict = await writeMessages(ctx, planned, { status: 201, body });
  } catch (e) {
    await removeAttachments(ctx.store, planned);
    throw e;
  }
  if (verdict.accepted) return { body, replayed: false };

  await removeAttachments(ctx.store, planned);
  if (ctx.idempotency && verdict.route !== null) {
    // A concurrent request with the same key got there first.
    const first = { route: verdict.route, requestHash: verdict.request_hash!, status: verdict.response_status!, body: storedBody(verdict.response_body) };
    return { body: replayOrConflict(first, ctx.idempotency).body as T, replayed: true };
  }
  const message = limitReached(verdict, countable(planned));
  if (!message) throw new Error('send refused by the database without a limit or key to explain it');
  throw rateLimited(message);
}

type Verdict = PlanUsageRow & {
  accepted: boolean;
  route: string | null;
  request_hash: string | null;
  response_status: number | null;
  response_body: unknown;
};

/** The one transaction; see the file comment. Its last statement is the verdict. */
async function writeMessages(ctx: SendContext, planned: MessagePlan[], answer: { status: number; body: unknown }): Promise<Verdict> {
  const { db, projectId, idempotency } = ctx;
  const key = idempotency ? storedKey(idempotency) : null;
  const firstId = planned[0]!.id;
  const written = sql`exists (select 1 from ${outboundMessages} where id = ${firstId})`;
  const guard = key !== null
    ? sql`${withinLimits(projectId, countable(planned))} and ${keyIsFree(projectId, key)}`
    : withinLimits(projectId, countable(planned));

  const insertMessages = db.execute(sql`
    insert into ${outboundMessages} (id, project_id, domain_id, message_id, "from", "to", cc, bcc, reply_to, subject, html, "text", headers, attachments, tags, sandbox, created_at)
    select m.id, ${projectId}, m.domain_id, m.message_id, m."from", m."to", m.cc, m.bcc, m.reply_to, m.subject, m.html, m."text", m.headers, m.attachments, m.tags, m.sandbox, m.created_at
    from jsonb_to_recordset(${JSON.stringify(planned.map(messageRow))}::jsonb) as m(
      id uuid, domain_id uuid, message_id text, "from" text, "to" text[], cc text[], bcc text[], reply_to text[], subject text,
      html text, "text" text, headers jsonb, attachments jsonb, tags text[], sandbox boolean, created_at timestamptz)
    where ${guard}`);
  const insertEmails = db.execute(sql`
    insert into ${emails} (id, project_id, message_id, recipient, kind, status, next_attempt_at, error_message, created_at)
    select e.id, ${projectId}, e.message_id, e.recipient, e.kind, e.status, e.next_attempt_at, e.error_message, e.created_at
    from jsonb_to_recordset(${JSON.stringify(planned.flatMap(emailRows))}::jsonb) as e(
      id uuid, message_id uuid, recipient text, kind text, status email_status, next_attempt_at timestamptz, error_message text, created_at timestamptz)
    where ${written}`);
  // Counted again only when refused, for the 429 message (the lock is still held: the same counts).
  const verdict = db.execute<Verdict>(sql`
    with v as (select ${written} as accepted)
    select v.accepted, pl.id as plan_id, pl.name as plan_name,
      coalesce(pl.hourly_email_limit, 0)::int as hourly_limit, coalesce(pl.daily_email_limit, 0)::int as daily_limit,
      case when v.accepted then 0 else ${usedIn(projectId, 'hour')} end as hour_used,
      case when v.accepted then 0 else ${usedIn(projectId, 'day')} end as day_used,
      ik.route, ik.request_hash, ik.response_status, ik.response_body
    from v cross join ${projects} p
      left join ${plans} pl on pl.id = p.plan_id
      left join ${idempotencyKeys} ik on ik.project_id = p.id and ik.key = ${key}
    where p.id = ${projectId}`);

  const results = await db.batch([
    db.execute(projectLock('send', projectId)),
    ...(key !== null ? [forgetExpired(db, projectId, key)] : []),
    insertMessages,
    insertEmails,
    ...(idempotency ? [recordAnswer(db, projectId, idempotency, answer, written)] : []),
    verdict,
  ]);
  const row = (results.at(-1) as Awaited<typeof verdict>).rows[0];
  if (!row) throw new Error(`project ${projectId} vanished during a send`);
  return row;
}

async function putAttachments(store: R2Bucket, planned: MessagePlan[]): Promise<void> {
  await Promise.all(planned.flatMap((plan) => (plan.input.attachments ?? []).map((a, i) => {
    const meta = plan.attachments[i]!;
    return store.put(meta.r2_key, decodeBase64(a.content), {
      httpMetadata: { contentType: meta.content_type },
      customMetadata: { filename: meta.filename },
    });
  })));
}

/** Best effort: a refused or failed send leaves no bytes behind (a crash in between may). */
async function removeAttachments(store: R2Bucket, planned: MessagePlan[]): Promise<void> {
  const keys = planned.flatMap((p) => p.attachments.map((a) => a.r2_key));
  if (!keys.length) return;
  try {
    await store.delete(keys);
  } catch (e) {
    console.error('could not remove the attachments of a refused send', e instanceof Error ? e.message : e);
  }
}

/**
 * Forgiving base64 (whitespace, missing padding) to bytes; the schema checked
 * the alphabet. Every `=` goes too: the schema takes an incomplete padding
 * (`ab=`), which `fromBase64` alone would refuse.
 */
const decodeBase64 = (content: string): Uint8Array => fromBase64(content.replace(/[\t\n\f\r =]/g, ''));
