// Accepting one send or a batch (docs/sending.md, "The path of one message"):
// attachments to R2, then one round trip: a transaction (`db.batch`) that
// takes the project's send lock and runs one statement. The statement reads
// the from-domains, the recipients' suppressions, the key's stored answer and
// the plan's usage, writes the messages, their recipient rows (suppressed or
// not, as it read) and the idempotency record only when all of them allow,
// and answers the verdict. One statement, so every part sees one snapshot,
// taken after the lock. It also checks that each template a message was
// rendered from is still at the version rendered (compose.ts).
import { inArray, sql, type SQL } from 'drizzle-orm';
import { domains, emails, outboundMessages, plans, projects, suppressions, templates } from '@edgemail/schema';
import { fromBase64, type Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { projectLock } from '../../db/project-lock.js';
import { invalid, rateLimited, unavailable } from '../errors.js';
import { domainOfAddress, isSendable, judgeSendingDomain, sendingDomainRows, sendingDomainsJson } from '../domains/sendable.js';
import { recordAnswer, replayOrConflict, storedAnswer, storedKey, unexpiredRecord, type IdempotentRequest, type RecordColumns } from '../idempotency/keys.js';
import { limitReached, usedIn, withinLimits, type PlanUsageRow } from './limits.js';
import { answerPieces, answerTextSql } from './answer-text.js';
import { attachmentBytes, countable, emailRows, messageRow, planMessage, REASON_SLOT, settledAnswerOf, type MessagePlan, type SendOrigin } from './plan.js';
import { composeItems, type ActiveVersion, type ComposedItem, type SendItem } from './compose.js';
import { renderLimits, type RenderLimitSettings } from '../templates/render.js';
import type { SendResult } from '../../contracts/email.js';
import { checkStreamRules, type StreamRuleSettings } from '../streams/send-rules.js';

export interface SendContext {
  db: Db;
  store: R2Bucket;
  config: Pick<Config, 'send.max_attachment_bytes'> & RenderLimitSettings & StreamRuleSettings;
  projectId: string;
  /** Sent with a sandbox key: rows are `captured`. */
  sandbox: boolean;
  /** `smtp` for SMTP submission, `test` for a template's send-test; `api` when absent. */
  origin?: SendOrigin;
  idempotency?: IdempotentRequest;
}

export type { SendItem } from './compose.js';

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
 * throws 400 (domain, attachments), 409 (key used with another body), 429
 * (plan limit) or 503 (a template activated again under each attempt). A replay answers the stored first answer. When several
 * apply, a stored answer wins, then the from-domain, then the limits.
 */
export async function sendMessages<T>(ctx: SendContext, requested: SendItem[], shape: (results: SendResult[]) => T): Promise<SendAnswer<T>> {
  const { projectId } = ctx;
  const max = ctx.config['send.max_attachment_bytes'];
  for (const { input, field } of requested) {
    const bytes = attachmentBytes(input);
    if (bytes > max) throw fieldProblem(field('attachments'), `must be at most ${max} bytes together, decoded (these are ${bytes})`);
  }
  // Templates are rendered before the statement (their active version from the isolate's cache, or read
  // now); 404/422 write nothing. The statement checks each is still the active version: when an activation
  // (or a change of default language) moved one, nothing was written and the send renders again from a
  // fresh read. Each attempt reads afresh, so only activations racing every attempt run out of them.
  for (let attempt = 1; ; attempt++) {
    const items = await composeItems(ctx.db, projectId, requested, renderLimits(ctx.config), attempt === 1 ? 'use' : 'refresh');
    const outcome = await sendComposed(ctx, items, shape);
    if (outcome !== 'template moved') return outcome;
    if (attempt === TEMPLATE_ATTEMPTS) throw unavailable('the template was activated again during every attempt to send: retry the request');
  }
}

/** Renders, then statements, before a send gives up on templates activated under it. */
const TEMPLATE_ATTEMPTS = 3;

/** The send of composed messages; `template moved` when a template's active version is not the one rendered. */
async function sendComposed<T>(ctx: SendContext, items: ComposedItem[], shape: (results: SendResult[]) => T): Promise<SendAnswer<T> | 'template moved'> {
  const { projectId } = ctx;
  // The stream of each message, and the rules its kind brings (400 naming the field).
  const kinds = await checkStreamRules(ctx.db, ctx.config, projectId, items);

  const createdAt = new Date();
  const planned = items.map(({ input, template, kept }, i) => planMessage(input, {
    projectId, sandbox: ctx.sandbox, createdAt, origin: ctx.origin, template, kept, broadcastKind: kinds[i] === 'broadcast',
  }));
  const active = [...new Map(items.flatMap((i) => i.active ? [[i.active.templateId, i.active] as const] : [])).values()];
  // Bytes first: a message is never visible (nor claimable) before its attachments are.
  await putAttachments(ctx.store, planned);
  let verdict: Verdict;
  try {
    verdict = await writeMessages(ctx, planned, active, shape);
  } catch (e) {
    await removeOwnAttachments(ctx, planned);
    throw e;
  }
  const suppressed = new Map(verdict.suppressed.map((s) => [s.address, s.reason]));
  if (verdict.accepted) return { body: shape(planned.map((p) => settledAnswerOf(p, suppressed))), replayed: false };

  await removeOwnAttachments(ctx, planned);
  const stored = storedAnswer(verdict);
  if (stored && ctx.idempotency) return { body: replayOrConflict(stored, ctx.idempotency).body as T, replayed: true };
  if (!verdict.templates_ok) return 'template moved';
  if (!verdict.domains_ok) {
    const rowByName = new Map(sendingDomainRows(verdict.domains).map((r) => [r.name, r]));
    for (const { input, field } of items) {
      const judged = judgeSendingDomain(input.from.key, rowByName.get(domainOfAddress(input.from.key) ?? ''));
      if (!judged.ok) throw fieldProblem(field('from'), judged.problem);
    }
  }
  const message = limitReached(verdict, countable(planned, suppressed));
  if (!message) throw new Error('send refused by the database without a key, domain or limit to explain it');
  throw rateLimited(message);
}

/** What the statement answers; the plan's usage is counted only when the limits refused. */
type Verdict = PlanUsageRow & RecordColumns & {
  accepted: boolean;
  domains_ok: boolean;
  /** Every template rendered from its active version is still at that version and default language. */
  templates_ok: boolean;
  /** The recipients' addresses the project suppresses (lower case), with each one's reason. */
  suppressed: { address: string; reason: string }[];
  /** `sendingDomainsJson` of the from-domains when one is not sendable, else null. */
  domains: unknown;
};

/** The window's usage for the 429 message, counted only when the limits refused (the snapshot of the check: the same count). */
const usageWhenRefused = (projectId: string, window: 'hour' | 'day'): SQL =>
  sql`case when v.key_free and v.domains_ok and not v.within_limits then ${usedIn(projectId, window)} else 0 end`;

/** The one round trip; see the file comment. */
async function writeMessages<T>(ctx: SendContext, planned: MessagePlan[], active: ActiveVersion[], shape: (results: SendResult[]) => T): Promise<Verdict> {
  const { db, projectId, idempotency } = ctx;
  const key = idempotency ? storedKey(idempotency) : null;
  const domainNames = [...new Set(planned.map((p) => p.domainName).filter((n): n is string => n !== null))];
  const accepted = sql`(select accepted from verdict)`;
  const recorded = idempotency
    ? sql`, recorded as (${recordAnswer(projectId, idempotency, 201, answerTextSql(answerPieces(planned, shape), sql.identifier('suppressed')), accepted)})`
    : sql``;

  const statement = sql`
    with message_input as (
      select * from jsonb_to_recordset(${JSON.stringify(planned.map(messageRow))}::jsonb) as m(
        id uuid, domain_name text, message_id text, "from" text, "to" text[], cc text[], bcc text[], reply_to text[], subject text,
        html text, "text" text, headers jsonb, attachments jsonb, tags text[], sandbox boolean, origin text, tracking jsonb,
        template_id uuid, template_version_id uuid, send_at timestamptz, created_at timestamptz, stream text, list_unsubscribe boolean)
    ), email_input as (
      select * from jsonb_to_recordset(${JSON.stringify(planned.flatMap(emailRows))}::jsonb) as e(
        id uuid, message_id uuid, address text, skey text, stream text, recipient text, kind text,
        status email_status, error_message text, next_attempt_at timestamptz,
        suppressed_status email_status, suppressed_error_message text, suppressed_next_attempt_at timestamptz, created_at timestamptz)
    ), suppressed as (
      -- Keyed by stream and address (plan.ts, suppressionKey): a suppression of every stream ('') or of the message's.
      select distinct on (e.skey) e.skey as address, s.reason from email_input e
        join ${suppressions} s on s.project_id = ${projectId} and s.address = e.address and (s.stream = '' or s.stream = e.stream)
          and (s.expires_at is null or s.expires_at > now())
        order by e.skey, s.stream = '' desc
    ), sending_domain as (
      select ${domains.id} as id, ${domains.name} as name from ${domains}
      where ${domains.projectId} = ${projectId} and ${domains.name} in (select domain_name from message_input) and ${isSendable()}
    ), stored as (
      ${unexpiredRecord(projectId, key)}
    ), countable as (
      select count(*)::int as n from email_input e where e.skey not in (select s.address from suppressed s)
    ), checks as (
      select not exists (select 1 from stored) as key_free,
        not exists (select 1 from message_input m where m.domain_name is null or m.domain_name not in (select name from sending_domain)) as domains_ok,
        ${withinLimits(projectId, sql`(select n from countable)`)} as within_limits,
        not exists (
          select 1 from jsonb_to_recordset(${JSON.stringify(active.map((a) => ({ template_id: a.templateId, version_id: a.versionId, default_language: a.defaultLanguage })))}::jsonb)
            as x(template_id uuid, version_id uuid, default_language text)
          where not exists (select 1 from ${templates} t where t.id = x.template_id and t.project_id = ${projectId}
            and t.active_version_id = x.version_id and t.default_language = x.default_language)) as templates_ok
    ), verdict as (
      select *, key_free and domains_ok and within_limits and templates_ok as accepted from checks
    ), inserted_messages as (
      insert into ${outboundMessages} (id, project_id, domain_id, message_id, "from", "to", cc, bcc, reply_to, subject, html, "text", headers, attachments, tags, sandbox, origin, tracking,
        template_id, template_version_id, send_at, created_at, stream, list_unsubscribe)
      select m.id, ${projectId}, d.id, m.message_id, m."from", m."to", m.cc, m.bcc, m.reply_to, m.subject, m.html, m."text", m.headers, m.attachments, m.tags, m.sandbox, m.origin, m.tracking,
        m.template_id, m.template_version_id, m.send_at, m.created_at, m.stream, m.list_unsubscribe
      from message_input m join sending_domain d on d.name = m.domain_name
      where ${accepted}
    ), inserted_emails as (
      insert into ${emails} (id, project_id, message_id, recipient, kind, status, next_attempt_at, error_message, created_at)
      select e.id, ${projectId}, e.message_id, e.recipient, e.kind,
        case when s.hit then e.suppressed_status else e.status end,
        case when s.hit then e.suppressed_next_attempt_at else e.next_attempt_at end,
        case when s.hit then replace(e.suppressed_error_message, ${REASON_SLOT}, s.reason::text) else e.error_message end,
        e.created_at
      from email_input e cross join lateral (select sp.address is not null as hit, sp.reason from (select 1) one left join suppressed sp on sp.address = e.skey) s
      where ${accepted}
    )${recorded}
    select v.accepted, v.domains_ok, v.templates_ok,
      (select coalesce(json_agg(json_build_object('address', address, 'reason', reason)), '[]'::json) from suppressed) as suppressed,
      case when v.key_free and not v.domains_ok then ${sendingDomainsJson(projectId, domainNames)} end as domains,
      pl.id as plan_id, pl.name as plan_name,
      coalesce(pl.hourly_email_limit, 0)::int as hourly_limit, coalesce(pl.daily_email_limit, 0)::int as daily_limit,
      ${usageWhenRefused(projectId, 'hour')} as hour_used, ${usageWhenRefused(projectId, 'day')} as day_used,
      st.route, st.request_hash, st.response_status, st.response_body
    from verdict v cross join ${projects} p
      left join ${plans} pl on pl.id = p.plan_id
      left join stored st on true
    where p.id = ${projectId}`;

  const [, result] = await db.batch([db.execute(projectLock('send', projectId)), db.execute<Verdict>(statement)]);
  const row = result.rows[0];
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

/**
 * A refused or failed send's bytes, except under a message id the caller chose
 * (a relay node's submission hand-over) that the log already holds: another
 * hand-over of that same message stored them under the same keys, and they
 * are its attachments now.
 */
async function removeOwnAttachments(ctx: Pick<SendContext, 'db' | 'store'>, planned: MessagePlan[]): Promise<void> {
  const chosen = planned.filter((p) => p.kept?.id !== undefined && p.attachments.length > 0).map((p) => p.id);
  const logged = chosen.length
    ? new Set((await ctx.db.select({ id: outboundMessages.id }).from(outboundMessages).where(inArray(outboundMessages.id, chosen))).map((r) => r.id))
    : new Set<string>();
  await removeAttachments(ctx.store, planned.filter((p) => !logged.has(p.id)));
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
