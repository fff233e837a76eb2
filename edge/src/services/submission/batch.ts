// Messages a relay node answered 250 for, handed over in batches
// (docs/submission.md, "Answered at the node"). Each is keyed by the id the
// node's 250 named: one already in the log is a replay (a batch sent again
// after a crash or a lost answer writes nothing twice). The others go through
// the send route's schema and `sendMessages`, one statement per project for
// the batch (the same checks, under the project's send lock); when that
// statement refuses, each message is sent alone, and one the edge still
// refuses (a reason the node's lease could not see) is recorded failed with
// its reason and an `email.failed` event: a 250'd message always ends in the log.
import { inArray } from 'drizzle-orm';
import { outboundMessages } from '@edgemail/schema';
import type { SubmissionBatchAnswer, SubmissionBatchItem } from '@edgemail/shared';
import type { SendMessageInput } from '../../contracts/send.js';
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
    merge(events, await recordFailed(ctx.db, item, reason));
    results[index] = { spool_id: item.spool_id, id: item.id, outcome: 'failed', reason };
  };
  const known = new Set((await ctx.db.select({ id: outboundMessages.id }).from(outboundMessages)
    .where(inArray(outboundMessages.id, items.map((i) => i.id)))).map((r) => r.id));
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
    const send = (batch: Ready[]) => sendMessages({ ...ctx, projectId, sandbox, origin: 'smtp' }, batch.map(asSendItem), () => null);
    try {
      await send(ready);
      for (const r of ready) results[r.index] = { spool_id: r.item.spool_id, id: r.item.id, outcome: 'sent' };
      continue;
    } catch (e) {
      if (!(e instanceof ServiceError)) throw e;
    }
    // One of them is refused: each alone, so that the others go.
    for (const r of ready) {
      try {
        await send([r]);
        results[r.index] = { spool_id: r.item.spool_id, id: r.item.id, outcome: 'sent' };
      } catch (e) {
        if (!(e instanceof ServiceError)) throw e;
        const refusal = smtpRefusal(e);
        await fail(r.index, r.item, `${refusal.code} ${refusal.text}`);
      }
    }
  }
  return { results, events };
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
