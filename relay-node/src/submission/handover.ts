// Hands the messages the listener answered 250 for to the edge in batches
// (`POST /relay/v1/submission/batch`, docs/submission.md, "Answered at the
// node"), as the inbound forwarder hands over received mail: whatever arrived
// while a batch was on its way goes in the next one, so the batches grow with
// the load and nothing waits for a timer. A message leaves the spool only once
// the edge answered for it (sent, replayed or recorded failed); while the edge
// does not answer the batch is tried again with backoff, and what is spooled
// survives a restart (`restore`).
//
// One id is never in two batches on their way at once: the same Message-ID
// and envelope submitted again (a client whose 250 was lost, a restart's
// restore) is answered with the first one's id, and a second spool entry of
// it waits until the batch holding the first was answered (the edge then
// says `replayed`), so the node never races itself at the edge.
import type { SubmissionBatchAnswer, SubmissionBatchItem } from '@edgemail/shared';
import { SUBMISSION_BATCH_MAX_MESSAGES } from '@edgemail/shared';
import { retrying } from '../edge/retry.js';
import type { Log } from '../log.js';
import type { Spool } from '../spool/index.js';

/** One accepted message waiting for the edge. */
export interface Accepted {
  item: SubmissionBatchItem;
  /** Recipients taken from the project's lease, given back once the edge answered. */
  units: number;
}

export interface HandoverDeps {
  /** The submission spool: a message leaves it once the edge answered for it. */
  spool: Pick<Spool<unknown>, 'remove'>;
  submitBatch(messages: SubmissionBatchItem[], signal?: AbortSignal): Promise<SubmissionBatchAnswer>;
  /** The edge answered for `n` recipients of the project: no longer pending against its lease. */
  settle(projectId: string, n: number): void;
  log: Log;
  /** Bytes of messages in one batch (one larger message goes alone). */
  maxBatchBytes: number;
  /** Batches on their way at once. */
  concurrency?: number;
  stopping?: AbortSignal;
}

export interface Handover {
  enqueue(accepted: Accepted): void;
  /** How many accepted messages the edge has not answered for yet. */
  readonly waiting: number;
  /** Resolves once every message enqueued so far was answered for (or `ms` passed). */
  drained(ms: number): Promise<void>;
}

/** @example const handover = createHandover({ spool, submitBatch: edge.submitBatch.bind(edge), settle, log, maxBatchBytes }); */
export function createHandover(deps: HandoverDeps): Handover {
  const queue: Accepted[] = [];
  /** Ids in a batch on its way, with how many of its entries that batch holds. */
  const sending = new Map<string, number>();
  let inFlight = 0;
  let waiting = 0;
  const idle: (() => void)[] = [];
  const concurrency = deps.concurrency ?? 2;

  /** The next batch from the queue's head; entries whose id another batch is carrying stay queued, in order. */
  const nextBatch = (): Accepted[] => {
    const batch: Accepted[] = [];
    let bytes = 0;
    for (let i = 0; i < queue.length && batch.length < SUBMISSION_BATCH_MAX_MESSAGES;) {
      const entry = queue[i]!;
      if (sending.has(entry.item.id) && !batch.some((a) => a.item.id === entry.item.id)) {
        i++;
        continue;
      }
      if (batch.length && bytes + entry.item.size > deps.maxBatchBytes) break;
      batch.push(...queue.splice(i, 1));
      bytes += entry.item.size;
    }
    for (const a of batch) sending.set(a.item.id, (sending.get(a.item.id) ?? 0) + 1);
    return batch;
  };
  const done = (batch: Accepted[]): void => {
    for (const a of batch) {
      const n = sending.get(a.item.id)! - 1;
      if (n > 0) sending.set(a.item.id, n);
      else sending.delete(a.item.id);
    }
  };

  const send = async (batch: Accepted[]): Promise<void> => {
    const messages = batch.map((a) => a.item);
    const answer = await retrying(() => deps.submitBatch(messages, deps.stopping), {
      signal: deps.stopping,
      backoff: { initialMs: 250, maxMs: 5_000 },
      // A refusal of the batch as a whole (its body) is not the edge being away, but it must not drop mail either: tried again, logged.
      retryable: () => true,
      onRetry: (err, delayMs) => deps.log.warn('submission batch not handed over; trying again', { messages: batch.length, delay_ms: delayMs, error: (err as Error).message }),
    });
    const byId = new Map(answer.results.map((r) => [r.spool_id, r]));
    await Promise.all(batch.map(async (a) => {
      const result = byId.get(a.item.spool_id);
      if (!result) {
        queue.push(a); // not answered for: with the next batch
        return;
      }
      if (result.outcome === 'failed') deps.log.warn('submitted message recorded failed by the edge', { id: a.item.id, spool_id: a.item.spool_id, reason: result.reason });
      deps.settle(a.item.project_id, a.units);
      waiting--;
      await deps.spool.remove(a.item.spool_id).catch((err: Error) => deps.log.error('submission spool entry not removed', { id: a.item.spool_id, error: err.message }));
    }));
  };

  const pump = (): void => {
    while (inFlight < concurrency && queue.length && !deps.stopping?.aborted) {
      const batch = nextBatch();
      // Everything queued waits for an id on its way: the batch carrying it pumps again when answered.
      if (!batch.length) return;
      inFlight++;
      send(batch).catch(async (err: Error) => {
        // Only a stopping node ends the retries: what is spooled is handed over after the restart.
        if (deps.stopping?.aborted) return;
        deps.log.error('submission batch failed; trying again', { error: err.message });
        await new Promise((resolve) => setTimeout(resolve, 5_000).unref());
        queue.unshift(...batch);
      }).finally(() => {
        done(batch);
        inFlight--;
        if (waiting === 0) idle.splice(0).forEach((f) => f());
        pump();
      });
    }
  };

  return {
    enqueue(accepted) {
      queue.push(accepted);
      waiting++;
      pump();
    },
    get waiting() {
      return waiting;
    },
    drained(ms) {
      if (waiting === 0) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(resolve, ms);
        idle.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    },
  };
}
