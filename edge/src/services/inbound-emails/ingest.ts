// Ingest of one forwarded message: for each project owning a recipient domain,
// its bytes in R2, then its record and its `inbound.received` outbox row in
// one transaction. A spool id already stored for a project stores nothing
// again, so a node may forward the same message as often as it needs to.
import { and, eq, inArray, sql } from 'drizzle-orm';
import { FORWARD_MAX_STORAGE_CALLS, FORWARD_MAX_STORED_ATTACHMENTS, forwardStorageCalls } from '@edgemail/shared';
import { inboundEmails, outbox, type InboundAttachment } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invalid } from '../errors.js';
import type { InboundMeta } from '../../contracts/inbound-meta.js';
import type { NodeScope } from '../relay-nodes/domains.js';
import { sharesAndRules, type ProjectShare } from './recipients.js';
import type { ExactReader } from './exact-reader.js';
import { attachmentKey, rawKey } from './storage-keys.js';
import { inboundReceivedData } from './event-data.js';
import { presentInboundEmail } from './present.js';
import { stripReply } from './reply/strip.js';
import { spamOfRecord, spamRejectedReason } from './spam.js';
import { ingestBounceForward, isBounceForward } from '../delivery/bounces/ingest-report.js';
import type { BounceSettings } from '../delivery/bounces/ingest-report.js';
import { countMatches, eventWebhooks, routeWith, ruledStatus } from '../inbound-rules/ingest-routing.js';
import type { RuleDecision } from '../inbound-rules/evaluate.js';
import { forwardTasks, type ForwardTask } from '../inbound-rules/forward.js';

type Status = 'received' | 'rejected' | 'failed';

export interface ForwardedMessage {
  meta: InboundMeta;
  /**
   * The rest of the request body, read once as it arrives: the raw message
   * (`meta.size` bytes), then each attachment when `meta.parsed.ok`.
   */
  body: Pick<ExactReader, 'pipe' | 'drain'>;
  /** The forwarding node: its id, and the domains it may store mail for. */
  node: { id: string } & NodeScope;
  /** The settings that name the bounce domain and verify return paths (docs/bounces.md); unset: no bounce domain. */
  bounces?: BounceSettings;
}

export interface IngestResult {
  inbound_emails: { id: string; project_id: string; status: Status }[];
  duplicate: boolean;
}

/** An `inbound.received` outbox row this ingest committed, for the hand-over to the dispatcher. */
export interface CommittedEvent { projectId: string; outboxId: number }

/** What an ingest leaves to do after its answer: events to hand over, forwards to send (inbound-rules/forward.ts). */
export interface AfterIngest { events: CommittedEvent[]; forwards?: ForwardTask[] }

/** The status ingest gives a message in one project, and why (`unstored`: why its attachments are not stored). */
export function decideStatus(meta: InboundMeta, senderSuppressed: boolean, unstored: string | null = null): { status: Status; reason: string | null } {
  if (senderSuppressed) return { status: 'rejected', reason: 'sender suppressed' };
  if (meta.smtp_rejected) return { status: 'rejected', reason: 'dmarc policy reject' };
  if (meta.spam_rejected) return { status: 'rejected', reason: spamRejectedReason(meta) };
  if (!meta.parsed.ok) return { status: 'failed', reason: meta.parsed.error || 'message could not be parsed' };
  if (unstored) return { status: 'failed', reason: unstored };
  return { status: 'received', reason: null };
}

/**
 * Why a parsed message's attachments are not stored, or null when they are:
 * each is an R2 object per project, and one forward's R2 calls are bounded
 * (shared/src/relay-protocol/inbound-forward.ts). The raw message, which
 * holds every attachment, is kept either way.
 */
export function whyAttachmentsUnstored(count: number, projects: number): string | null {
  if (count > FORWARD_MAX_STORED_ATTACHMENTS) {
    return `${count} attachments, over the ${FORWARD_MAX_STORED_ATTACHMENTS} stored per message; only the raw message is kept`;
  }
  const calls = forwardStorageCalls(1 + count, projects);
  if (calls > FORWARD_MAX_STORAGE_CALLS) {
    return `${count} attachments for ${projects} projects take ${calls} storage calls, over the ${FORWARD_MAX_STORAGE_CALLS} one message may make; only the raw message is kept`;
  }
  return null;
}

/** The objects of one message in one project: the raw message, then each attachment. */
function objectsOf(projectId: string, meta: InboundMeta, attachments: InboundAttachment[]) {
  return [
    { key: rawKey(projectId, meta.spool_id), size: meta.size, what: 'raw message', options: { httpMetadata: { contentType: 'message/rfc822' } } },
    ...attachments.map((a, i) => ({
      key: attachmentKey(projectId, meta.spool_id, i), size: a.size, what: `attachment ${i}`,
      options: { httpMetadata: { contentType: a.content_type }, customMetadata: { filename: a.filename } },
    })),
  ];
}

/**
 * Streams the body into the first project's objects as it arrives (R2 takes
 * a stream of known length: a FixedLengthStream per object, which also fails
 * a piece that is shorter or longer than announced), then copies those
 * objects to every other project's keys, R2 to R2. The isolate never holds
 * more than a chunk of the message.
 */
export async function putObjects(store: R2Bucket, projectIds: string[], message: ForwardedMessage, attachments: InboundAttachment[]): Promise<void> {
  const [first, ...others] = projectIds.map((id) => objectsOf(id, message.meta, attachments));
  for (const object of first!) {
    if (object.size === 0) {
      await store.put(object.key, new Uint8Array(0), object.options);
      continue;
    }
    const { readable, writable } = new FixedLengthStream(object.size);
    const stored = store.put(object.key, readable, object.options);
    // Both settle: a failed piece aborts the stream, which fails the put.
    const [piped, put] = await Promise.allSettled([message.body.pipe(object.size, writable, object.what), stored]);
    if (piped.status === 'rejected') throw piped.reason;
    if (put.status === 'rejected') throw put.reason;
  }
  // One copy at a time: R2 calls in flight count against the Worker's
  // connection limit (their number is bounded before: FORWARD_MAX_STORAGE_CALLS).
  for (const objects of others) {
    for (const [i, object] of objects.entries()) {
      const source = await store.get(first![i]!.key);
      if (!source) throw new Error(`${first![i]!.key} vanished while being copied`);
      await store.put(object.key, source.body, object.options);
    }
  }
}

export interface Planned { share: ProjectShare; id: string; status: Status; reason: string | null; route?: RuleDecision }

/** A planned record's row, and its `inbound.received` event's data. */
export function recordAndEventData(plan: Planned, message: Pick<ForwardedMessage, 'meta' | 'node'>, attachments: InboundAttachment[]) {
  const { meta } = message;
  const { share, id, status, reason } = plan;
  const stripped = stripReply({ text: meta.parsed.text, html: meta.parsed.html });
  const record = {
    id, projectId: share.projectId, domainId: share.domainId, nodeId: message.node.id, spoolId: meta.spool_id,
    messageId: meta.parsed.message_id, sender: meta.mail_from, recipients: share.recipients,
    subject: meta.parsed.subject, textBody: meta.parsed.text, htmlBody: meta.parsed.html,
    strippedText: stripped.stripped_text, strippedSignature: stripped.stripped_signature, headers: { ...meta.parsed.headers, ...meta.parsed.repeated_headers },
    attachments, auth: meta.auth, spam: spamOfRecord(meta, share.spam), rawKey: rawKey(share.projectId, meta.spool_id), size: meta.size,
    status, statusReason: reason, receivedAt: new Date(meta.received_at), createdAt: new Date(),
  };
  // Metadata only, built as the retry route builds it from the stored record,
  // so a re-emitted event is the same as this one.
  const data = inboundReceivedData(presentInboundEmail({ ...record, receivedMicros: 0 }));
  return { record, data };
}

/** One statement: the record, and its outbox row only if the record was actually inserted. */
function insertRecordAndEvent(db: Db, plan: Planned, message: ForwardedMessage, attachments: InboundAttachment[]) {
  const { record, data } = recordAndEventData(plan, message, attachments);
  const insertRecord = db.insert(inboundEmails).values(record)
    .onConflictDoNothing({ target: [inboundEmails.spoolId, inboundEmails.projectId] })
    .returning({ projectId: inboundEmails.projectId });
  return db.execute<{ project_id: string; id: string | number }>(sql`
    with inserted as ${insertRecord}
    insert into ${outbox} (project_id, event, data, webhook_ids)
    select project_id, 'inbound.received', ${JSON.stringify(data)}::jsonb, ${eventWebhooks(plan.route)}::uuid[] from inserted
    returning project_id, id`);
}

/** Refuses for good a message for more projects than one forward's storage calls can store it for. */
export function assertStorable(projects: number): void {
  const rawCalls = forwardStorageCalls(1, projects);
  if (rawCalls > FORWARD_MAX_STORAGE_CALLS) {
    throw invalid(`invalid meta: meta.rcpt_to: recipients in ${projects} projects; storing one message for each takes ${rawCalls} storage calls, over the ${FORWARD_MAX_STORAGE_CALLS} one message may make`,
      { 'meta.rcpt_to': `recipients in at most ${Math.floor((FORWARD_MAX_STORAGE_CALLS + 1) / 2)} projects per message` });
  }
}

/**
 * @example const result = await ingestMessage(c.get('db'), c.env.MAIL_STORE, { meta, body: rest, node });
 */
export async function ingestMessage(db: Db, store: R2Bucket, message: ForwardedMessage): Promise<IngestResult & AfterIngest> {
  const { meta } = message;
  // Mail to the bounce domain is a report about an email sent, never inbound mail.
  if (message.bounces && isBounceForward(meta.rcpt_to, message.bounces)) return ingestBounceForward(db, message.bounces, message);
  // The projects and their routing rules in one statement (recipients.ts).
  const found = await sharesAndRules(db, [{ spoolId: meta.spool_id, sender: meta.mail_from, rcptTo: meta.rcpt_to }], message.node);
  const shares = found.shares[0]!;
  const todo = shares.filter((s) => !s.stored);
  // Even the raw message alone is two R2 calls per further project: past the
  // bound no forward of this message can succeed, so it is refused for good
  // (the node dead-letters it) rather than failing as a 500 retried forever.
  assertStorable(todo.length);
  const unstored = meta.parsed.ok ? whyAttachmentsUnstored(meta.parsed.attachments.length, todo.length) : null;
  // Routing rules (docs/inbound-rules.md): a dropped project stores nothing and is only counted.
  const routes = routeWith(found.rules, meta, todo);
  const dropped = todo.flatMap((s) => (routes.get(s.projectId)?.action === 'drop' ? [routes.get(s.projectId)!.rule!.id] : []));
  const plans: Planned[] = todo.filter((share) => routes.get(share.projectId)?.action !== 'drop').map((share) => ({
    share, id: crypto.randomUUID(), route: routes.get(share.projectId), ...ruledStatus(routes.get(share.projectId), decideStatus(meta, share.senderSuppressed, unstored)),
  }));
  if (dropped.length) await countMatches(db, dropped);
  const answer = new Map<string, IngestResult['inbound_emails'][number]>();
  for (const s of shares) if (s.stored) answer.set(s.projectId, { id: s.stored.id, project_id: s.projectId, status: s.stored.status });
  if (!plans.length) {
    // Nothing to store: the upload is read to its end and dropped.
    await message.body.drain();
    return { inbound_emails: [...answer.values()], duplicate: shares.length > 0 && todo.length === 0, events: [] };
  }

  // An unparsed message has no attachments to store, nor one with too many;
  // only its raw bytes are kept (the attachments' pieces are read and dropped).
  // The sizes are the bytes received: a piece of another length fails.
  const attachments: InboundAttachment[] = meta.parsed.ok && !unstored
    ? meta.parsed.attachments.map((a) => ({ filename: a.filename, content_type: a.content_type, size: a.size }))
    : [];
  // Bytes first: a record is never visible before its raw message is. A failure
  // after this leaves objects that a retry overwrites with the same bytes.
  await putObjects(store, plans.map((p) => p.share.projectId), message, attachments);
  if (attachments.length < (meta.parsed.ok ? meta.parsed.attachments.length : 0)) await message.body.drain();
  const [first, ...rest] = plans.map((p) => insertRecordAndEvent(db, p, message, attachments));
  // One project (the usual case) is one statement, atomic and committed on its
  // own: a batch would wrap it in BEGIN and COMMIT, two more round trips to
  // PostgreSQL. Several projects' records go in one transaction.
  const results = rest.length ? await db.batch([first!, ...rest]) : [await first!];
  const events = results.flatMap((r) => r.rows.map((row) => ({ projectId: row.project_id, outboxId: Number(row.id) })));
  const inserted = new Set(events.map((e) => e.projectId));
  const ruled = plans.filter((p) => p.route?.rule && inserted.has(p.share.projectId)).map((p) => p.route!.rule!.id);
  if (ruled.length) await countMatches(db, ruled);
  for (const p of plans) {
    if (inserted.has(p.share.projectId)) answer.set(p.share.projectId, { id: p.id, project_id: p.share.projectId, status: p.status });
  }

  // A concurrent forward of the same message stored these first: answer with its records.
  const lost = plans.filter((p) => !inserted.has(p.share.projectId)).map((p) => p.share.projectId);
  if (lost.length) {
    const rows = await db.select({ id: inboundEmails.id, projectId: inboundEmails.projectId, status: inboundEmails.status })
      .from(inboundEmails)
      .where(and(eq(inboundEmails.spoolId, meta.spool_id), inArray(inboundEmails.projectId, lost)));
    for (const r of rows) answer.set(r.projectId, { id: r.id, project_id: r.projectId, status: r.status });
  }
  const records = shares.map((s) => answer.get(s.projectId)!).filter(Boolean);
  const forwards = forwardTasks(plans, (p) => inserted.has(p.share.projectId), meta, attachments);
  return { inbound_emails: records, duplicate: inserted.size === 0, events, forwards };
}
