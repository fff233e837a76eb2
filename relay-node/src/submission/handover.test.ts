import { describe, expect, test } from 'vitest';
import type { SubmissionBatchAnswer, SubmissionBatchItem } from '@edgemail/shared';
import { createHandover, type Accepted } from './handover.js';

const log = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const accepted = (id: string, spoolId: string): Accepted => ({
  units: 1,
  item: {
    id, spool_id: spoolId, project_id: 'p1', sandbox: false, client_address: '127.0.0.1', mail_from: 'a@news.test', rcpt_to: ['b@example.org'], size: 100,
    message: { from: 'a@news.test', to: ['b@example.org'], cc: [], bcc: [], reply_to: [], subject: 's', text: 'x', headers: {}, attachments: [] },
  },
});

describe('createHandover', () => {
  test('an id already on its way is never in a second batch at the same time (the same Message-ID submitted twice)', async () => {
    const batches: string[][] = [];
    const onTheWay = new Set<string>();
    let overlapped = 0;
    const removed: string[] = [];
    const handover = createHandover({
      spool: { remove: async (id: string) => { removed.push(id); } },
      async submitBatch(messages: SubmissionBatchItem[]): Promise<SubmissionBatchAnswer> {
        batches.push(messages.map((m) => m.spool_id));
        for (const m of messages) if (onTheWay.has(m.id)) overlapped++;
        for (const m of messages) onTheWay.add(m.id);
        await new Promise((r) => setTimeout(r, 20)); // a slow answer
        for (const m of messages) onTheWay.delete(m.id);
        return { results: messages.map((m) => ({ spool_id: m.spool_id, id: m.id, outcome: 'sent' as const })) };
      },
      settle: () => undefined,
      log,
      // One message per batch: two batches on their way at once.
      maxBatchBytes: 100,
      concurrency: 2,
    });
    const same = crypto.randomUUID();
    handover.enqueue(accepted(same, 's1'));
    handover.enqueue(accepted(same, 's2')); // the same message again, in a spool entry of its own
    handover.enqueue(accepted(crypto.randomUUID(), 's3'));
    await handover.drained(2_000);
    expect(overlapped).toBe(0);
    expect(handover.waiting).toBe(0);
    // The other message went beside the first; the repeat waited for the first's answer.
    expect(batches).toEqual([['s1'], ['s3'], ['s2']]);
    expect(removed.sort()).toEqual(['s1', 's2', 's3']);
  });
});
