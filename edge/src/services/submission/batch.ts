// Messages a relay node answered 250 for, handed over in batches
// (docs/submission.md, "Answered at the node"). Each is keyed by the id the
// node's 250 named: one already in the log is a replay (a batch sent again
// after a crash or a lost answer writes nothing twice). The others go through
// the send route's schema and `sendMessages`, one statement per project for
// the batch (the same checks, under the project's send lock); when that
// statement refuses, each message is sent alone, and one the edge still
// refuses (a reason the node's lease could not see) is recorded failed with
// its reason and an `email.failed` event: a 250'd message always ends in the log.
//
// Two hand-overs of one id can run at once (a node's batch sent again while
// its first answer is slow, two nodes given the same Message-ID and envelope):
// both find it unknown, and the second statement, waiting on the project's
// send lock, meets the first's row. That unique violation is the replay it
// is: the ids now in the log answer `replayed`, the others are sent again.
import { inArray } from 'drizzle-orm';
import { outboundMessages } from '@edgemail/schema';
import type { SubmissionBatchAnswer, SubmissionBatchItem } from '@edgemail/shared';
import type { SendMessageInput } from '../../contracts/send.js';
import type { Db } from '../../db/client.js';
import { isUniqueViolation } from '../../db/errors.js';
import { ServiceError } from '../errors.js';
import { sendMessages, type SendContext, type SendItem } from '../emails/send.js';
import type { OutboxRows } from '../emails/events.js';
import type { RelayNodeRow } from '../relay-nodes/find.js';
import { keptHeaders } from './kept-headers.js';
import { recordFailed } from './record-failed.js';
import { sendInputOf, smtpRefusal } from './submit.js';

type Result = SubmissionBatchAnswer['results'][number];
type Ctx = Omit<SendContext, 'projectId' | 'sandbox' | 'origin' | 'idempotency'>;
interface Ready { index: number; item: SubmissionBatchItem; input: SendMessageInput }

/** One result per message, in order, and the `email.failed` outbox rows to hand over. */
export async function submitBatch(ctx: Ctx, node: RelayNodeRow, items: SubmissionBatchItem[]): Promise<{ results: Result[]; events: Map<string, OutboxRows> }> {
  const results: Result[] = new Array(items.length);
  const events = new Map<string, OutboxRows>();
  const fail = async (index: number, item: SubmissionBatchItem, reason: string) => {
    const written = await recordFailed(ctx.db, item, reason);
    merge(events, written);
    // Nothing written: another hand-over of this id put it in the log first.
    results[index] = written.size ? { spool_id: item.spool_id, id: item.id, outcome: 'failed', reason } : { spool_id: item.spool_id, id: item.id, outcome: 'replayed' };
  };
  const known = await knownIds(ctx.db, items.map((i) => i.id));
  const groups = new Map<string, Ready[]>();
  for (const [index, item] of items.entries()) {
    // Before the log is asked: another project's ids are no business of this node, not even whether they exist.
    if (!node.installationWide && node.projectId !== item.project_id) {
      // A node's lease only ever names its own project: nothing of another project is written for it.
      results[index] = { spool_id: item.spool_id, id: item.id, outcome: 'failed', reason: 'this relay node takes submissions for its own project only' };
      continue;
    }
    // In the log already, or earlier in this batch (the same Message-ID and envelope sent again at once): the same message.
    if (known.has(item.id)) {
      results[index] = { spool_id: item.spool_id, id: item.id, outcome: 'replayed' };
      continue;
    }
    known.add(item.id);
    const parsed = sendInputOf(item.message);
    if (!parsed.ok) {
      await fail(index, item, `${parsed.refusal.code} ${parsed.refusal.text}`);
      continue;
    }
    const key = `${item.project_id}/${item.sandbox}`;
    groups.set(key, [...(groups.get(key) ?? []), { index, item, input: parsed.input }]);
  }
  for (const ready of groups.values()) {
    const { project_id: projectId, sandbox } = ready[0]!.item;
    const send = (batch: Ready[]) => sendUnlessReplayed(ctx, batch, (rest) => sendMessages({ ...ctx, projectId, sandbox, origin: 'smtp' }, rest.map(asSendItem), () => null));
    const answer = (r: Ready, replayed: Set<string>): Result => ({ spool_id: r.item.spool_id, id: r.item.id, outcome: replayed.has(r.item.id) ? 'replayed' : 'sent' });
    try {
      const replayed = await send(ready);
      for (const r of ready) results[r.index] = answer(r, replayed);
      continue;
    } catch (e) {
      if (!(e instanceof ServiceError)) throw e;
    }
    // One of them is refused: each alone, so that the others go.
    for (const r of ready) {
      try {
        results[r.index] = answer(r, await send([r]));
      } catch (e) {
        if (!(e instanceof ServiceError)) throw e;
        const refusal = smtpRefusal(e);
        await fail(r.index, r.item, `${refusal.code} ${refusal.text}`);
      }
    }
  }
  return { results, events };
}

/** Which of `ids` the email log holds. */
async function knownIds(db: Db, ids: string[]): Promise<Set<string>> {
  const rows = await db.select({ id: outboundMessages.id }).from(outboundMessages).where(inArray(outboundMessages.id, ids));
  return new Set(rows.map((r) => r.id));
}

/**
 * `send(batch)`, where a unique violation means another hand-over of one of
 * these ids committed since they were looked up: those answer `replayed` and
 * the rest are sent again (each round drops at least one id, or the violation
 * is not ours and is thrown). Returns the replayed ids.
 */
async function sendUnlessReplayed(ctx: Ctx, batch: Ready[], send: (batch: Ready[]) => Promise<unknown>): Promise<Set<string>> {
  const replayed = new Set<string>();
  let rest = batch;
  while (rest.length) {
    try {
      await send(rest);
      break;
    } catch (e) {
      if (!isUniqueViolation(e)) throw e;
      const known = await knownIds(ctx.db, rest.map((r) => r.item.id));
      if (!known.size) throw e;
      // Their attachments are the other hand-over's (the same keys): the refused send left them in place (send.ts).
      for (const r of rest) if (known.has(r.item.id)) replayed.add(r.item.id);
      rest = rest.filter((r) => !known.has(r.item.id));
    }
  }
  return replayed;
}

/** The message under the id its 250 named, with the client's Message-ID and Date when valid. */
function asSendItem({ item, input }: Ready): SendItem {
  return { input, field: (name) => name, kept: { ...keptHeaders(item), id: item.id } };
}

function merge(into: Map<string, OutboxRows>, from: Map<string, OutboxRows>): void {
  for (const [project, rows] of from) {
    const entry = into.get(project) ?? { ids: [], settled: [] };
    entry.ids.push(...rows.ids);
    entry.settled.push(...rows.settled);
    into.set(project, entry);
  }
}
