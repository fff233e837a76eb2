// Ingest of a batch of forwarded messages (`POST /relay/v1/inbound/batch`):
// each message is decided exactly as ingestMessage decides one, but the batch
// pays the per-request work once: one query for every message's projects,
// the bytes streamed to R2 in body order, then every record and its
// `inbound.received` outbox row in one statement. A message refused on its
// own (its meta, its storage calls) is answered so and stores nothing; the
// others are stored. A message no project's domain takes goes through
// ingestMessage itself, so whatever the single route does with such mail, a
// batch does too.
import { and, eq, or, sql, type SQL } from 'drizzle-orm';
import { FORWARD_MAX_STORAGE_CALLS, forwardStorageCalls, type ForwardBatchResult } from '@edgemail/shared';
import { inboundEmails, outbox, type InboundAttachment } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { ServiceError } from '../errors.js';
import type { InboundMeta } from '../../contracts/inbound-meta.js';
import type { NodeScope } from '../relay-nodes/domains.js';
import { sharesAndRules, type ProjectShare } from './recipients.js';
import {
  assertStorable, decideStatus, ingestMessage, putObjects, recordAndEventData, whyAttachmentsUnstored,
  type CommittedEvent, type ForwardedMessage, type IngestResult, type Planned,
} from './ingest.js';
import { forwardTasks, type ForwardTask } from '../inbound-rules/forward.js';
import type { PieceReader } from './forwarded-batch.js';
import { countMatches, eventWebhooks, routeWith, ruledStatus } from '../inbound-rules/ingest-routing.js';

/** A refusal as the single route would answer it: status, error, fields, and for a 429 when to come back. */
export type Refusal = Extract<ForwardBatchResult, { error: string }>;

export interface BatchMessage {
  /** Null when the message is refused before ingest (`refusal`). */
  meta: InboundMeta | null;
  refusal: Refusal | null;
  /** Its raw message and attachments in the body. */
  body: PieceReader;
}

type Node = { id: string } & NodeScope;

/** The statuses of the service refusals a message may get on its own (http/errors.ts maps the same kinds). */
const STATUS_OF = { invalid: 400, too_large: 413, rate_limited: 429 } as const;

/** A service refusal of one message as its result; anything else fails the batch (thrown). */
export function refusalOf(err: unknown, spoolId: string | null): Refusal {
  if (err instanceof ServiceError && err.kind in STATUS_OF) {
    return { status: STATUS_OF[err.kind as keyof typeof STATUS_OF], spool_id: spoolId, error: err.message, ...(err.fields ? { fields: err.fields } : {}) };
  }
  throw err;
}

/** What a message of the batch comes to before its bytes are read. */
type Step =
  | { kind: 'answered'; result: ForwardBatchResult }
  | { kind: 'single'; meta: InboundMeta }
  | { kind: 'store'; meta: InboundMeta; shares: ProjectShare[]; plans: Planned[]; attachments: InboundAttachment[] };

/** What the single route hands ingestMessage besides the message itself: a message ingested alone gets it too. */
export type AloneSettings = Omit<ForwardedMessage, 'meta' | 'body' | 'node'>;

/**
 * @example const { results, events } = await ingestBatch(db, c.env.MAIL_STORE, node, messages, {});
 */
export async function ingestBatch(db: Db, store: R2Bucket, node: Node, messages: BatchMessage[], alone: AloneSettings): Promise<{ results: ForwardBatchResult[]; events: CommittedEvent[]; forwards: ForwardTask[] }> {
  const candidates = messages.map((m, i) => ({ m, i })).filter(({ m }) => m.meta && !m.refusal);
  // Every message's projects and their routing rules (docs/inbound-rules.md) in one statement.
  const sharesOf = new Map<number, ProjectShare[]>();
  const found = await sharesAndRules(db, candidates.map(({ m }) => ({ spoolId: m.meta!.spool_id, sender: m.meta!.mail_from, rcptTo: m.meta!.rcpt_to })), node);
  candidates.forEach(({ i }, k) => sharesOf.set(i, found.shares[k]!));
  const rules = found.rules;
  const dropped: string[] = [];

  // Decided in body order, so that the storage calls go to the first messages.
  let storageCalls = 0;
  const steps: Step[] = messages.map((m, i) => {
    if (!m.meta || m.refusal) return { kind: 'answered', result: m.refusal! };
    const meta = m.meta;
    const shares = sharesOf.get(i)!;
    if (!shares.length) return { kind: 'single', meta };
    const todo = shares.filter((s) => !s.stored);
    const stored = () => shares.map((s) => ({ id: s.stored!.id, project_id: s.projectId, status: s.stored!.status }));
    if (!todo.length) return { kind: 'answered', result: { status: 200, spool_id: meta.spool_id, inbound_emails: stored(), duplicate: true } };
    try {
      assertStorable(todo.length);
    } catch (err) {
      return { kind: 'answered', result: refusalOf(err, meta.spool_id) };
    }
    const unstored = meta.parsed.ok ? whyAttachmentsUnstored(meta.parsed.attachments.length, todo.length) : null;
    const attachments: InboundAttachment[] = meta.parsed.ok && !unstored
      ? meta.parsed.attachments.map((a) => ({ filename: a.filename, content_type: a.content_type, size: a.size }))
      : [];
    // One forward's storage calls are bounded (the Worker's subrequests):
    // a message that would take the batch over is sent again on its own.
    const calls = forwardStorageCalls(1 + attachments.length, todo.length);
    if (storageCalls + calls > FORWARD_MAX_STORAGE_CALLS) {
      return { kind: 'answered', result: { status: 413, spool_id: meta.spool_id, error: `not stored in this batch: its ${calls} storage calls would take the batch over the ${FORWARD_MAX_STORAGE_CALLS} one forward may make; forward it alone` } };
    }
    storageCalls += calls;
    const routes = routeWith(rules, meta, todo);
    for (const s of todo) if (routes.get(s.projectId)?.action === 'drop') dropped.push(routes.get(s.projectId)!.rule!.id);
    const plans = todo.filter((share) => routes.get(share.projectId)?.action !== 'drop').map((share) => ({
      share, id: crypto.randomUUID(), route: routes.get(share.projectId), ...ruledStatus(routes.get(share.projectId), decideStatus(meta, share.senderSuppressed, unstored)),
    }));
    if (!plans.length) return { kind: 'answered', result: { status: 200, spool_id: meta.spool_id, inbound_emails: shares.filter((s) => s.stored).map((s) => ({ id: s.stored!.id, project_id: s.projectId, status: s.stored!.status })), duplicate: false } };
    return { kind: 'store', meta, shares, plans, attachments };
  });

  // Bytes first, in body order: a record is never visible before its raw
  // message is (a failure here fails the batch; a retry overwrites the same bytes).
  const results: (ForwardBatchResult | null)[] = steps.map((s) => (s.kind === 'answered' ? s.result : null));
  const events: CommittedEvent[] = [];
  const forwards: ForwardTask[] = [];
  for (const [i, step] of steps.entries()) {
    const body = messages[i]!.body;
    if (step.kind === 'store') {
      await putObjects(store, step.plans.map((p) => p.share.projectId), { meta: step.meta, body, node }, step.attachments);
    } else if (step.kind === 'single') {
      try {
        const { events: committed, forwards: more, ...answer } = await ingestMessage(db, store, { ...alone, meta: step.meta, body, node });
        events.push(...committed);
        forwards.push(...more ?? []);
        results[i] = { status: 200, spool_id: step.meta.spool_id, ...answer };
      } catch (err) {
        results[i] = refusalOf(err, step.meta.spool_id);
      }
    }
    // What is left of this message (a refused one, attachments not stored).
    await body.drain();
  }

  const storing = steps.flatMap((s) => (s.kind === 'store' ? [s] : []));
  if (dropped.length) await countMatches(db, dropped);
  if (storing.length) {
    const inserted = await insertAll(db, storing, node);
    events.push(...inserted.events);
    const ruled = storing.flatMap((s) => s.plans.filter((p) => p.route?.rule && inserted.records.has(p.id)).map((p) => p.route!.rule!.id));
    for (const s of storing) forwards.push(...forwardTasks(s.plans, (p) => inserted.records.has(p.id), s.meta, s.attachments));
    if (ruled.length) await countMatches(db, ruled);
    const lost = storing.flatMap((s) => s.plans.filter((p) => !inserted.records.has(p.id)).map((p) => ({ spoolId: s.meta.spool_id, projectId: p.share.projectId })));
    const raced = await storedBefore(db, lost);
    for (const [i, step] of steps.entries()) {
      if (step.kind !== 'store') continue;
      const answer = new Map<string, IngestResult['inbound_emails'][number]>();
      for (const s of step.shares) if (s.stored) answer.set(s.projectId, { id: s.stored.id, project_id: s.projectId, status: s.stored.status });
      let fresh = 0;
      for (const p of step.plans) {
        if (inserted.records.has(p.id)) {
          answer.set(p.share.projectId, { id: p.id, project_id: p.share.projectId, status: p.status });
          fresh++;
        } else {
          // A concurrent forward of the same message stored it first: answered with its record.
          const r = raced.get(`${step.meta.spool_id}|${p.share.projectId}`);
          if (r) answer.set(p.share.projectId, r);
        }
      }
      results[i] = {
        status: 200, spool_id: step.meta.spool_id,
        inbound_emails: step.shares.map((s) => answer.get(s.projectId)!).filter(Boolean),
        duplicate: fresh === 0,
      };
    }
  }
  return { results: results.map((r) => r!), events, forwards };
}

/**
 * One statement for the whole batch: every record, and an outbox row for each
 * record actually inserted (a `(spool_id, project_id)` already stored is skipped).
 */
async function insertAll(db: Db, storing: Extract<Step, { kind: 'store' }>[], node: Node) {
  const rows = storing.flatMap((s) => s.plans.map((p) => recordAndEventData(p, { meta: s.meta, node }, s.attachments)));
  const insertRecords = db.insert(inboundEmails).values(rows.map((r) => r.record))
    .onConflictDoNothing({ target: [inboundEmails.spoolId, inboundEmails.projectId] })
    .returning({ id: inboundEmails.id, projectId: inboundEmails.projectId });
  const routeOf = new Map(storing.flatMap((s) => s.plans.map((p) => [p.id, p.route] as const)));
  const data = rows.map((r) => sql`(${r.record.id}::uuid, ${JSON.stringify(r.data)}::jsonb, ${eventWebhooks(routeOf.get(r.record.id))}::uuid[])`);
  const { rows: out } = await db.execute<{ kind: 'record' | 'event'; id: string; project_id: string }>(sql`
    with inserted as ${insertRecords},
    events as (
      insert into ${outbox} (project_id, event, data, webhook_ids)
      select inserted.project_id, 'inbound.received', d.data, d.webhook_ids
      from inserted join (values ${sql.join(data, sql`, `)}) as d(id, data, webhook_ids) on d.id = inserted.id
      returning id, project_id
    )
    select 'record' as kind, id::text as id, project_id from inserted
    union all
    select 'event' as kind, id::text as id, project_id from events`);
  return {
    records: new Set(out.filter((r) => r.kind === 'record').map((r) => r.id)),
    events: out.filter((r) => r.kind === 'event').map((r) => ({ projectId: r.project_id, outboxId: Number(r.id) })),
  };
}

/** The records a concurrent forward stored first, by `spool id|project id`. */
async function storedBefore(db: Db, pairs: { spoolId: string; projectId: string }[]) {
  const found = new Map<string, IngestResult['inbound_emails'][number]>();
  if (!pairs.length) return found;
  const which: SQL[] = pairs.map((p) => and(eq(inboundEmails.spoolId, p.spoolId), eq(inboundEmails.projectId, p.projectId))!);
  const rows = await db.select({ id: inboundEmails.id, projectId: inboundEmails.projectId, spoolId: inboundEmails.spoolId, status: inboundEmails.status })
    .from(inboundEmails).where(or(...which));
  for (const r of rows) found.set(`${r.spoolId}|${r.projectId}`, { id: r.id, project_id: r.projectId, status: r.status });
  return found;
}
