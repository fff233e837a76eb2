import { afterEach, describe, expect, test, vi } from 'vitest';
import { AuditQueue, type AuditEventRow } from './queue.js';

const event = (type: string): AuditEventRow => ({ category: 'project', type });

describe('AuditQueue', () => {
  afterEach(() => vi.restoreAllMocks());

  test('flushes everything queued, in order, in batches of at most 100', async () => {
    const q = new AuditQueue(1000);
    for (let i = 0; i < 250; i++) q.enqueue(event(`e${i}`));
    const batches: AuditEventRow[][] = [];
    await q.flush(async (b) => { batches.push(b); });
    expect(batches.map((b) => b.length)).toEqual([100, 100, 50]);
    expect(batches.flat().map((e) => e.type)).toEqual(Array.from({ length: 250 }, (_, i) => `e${i}`));
    expect(q.size).toBe(0);
  });

  test('when full, drops the event and logs each drop with a running total', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((m: string) => { errors.push(m); });
    const q = new AuditQueue(2);
    expect(q.enqueue(event('a'))).toBe(true);
    expect(q.enqueue(event('b'))).toBe(true);
    expect(q.enqueue(event('c'))).toBe(false);
    expect(q.enqueue(event('d'))).toBe(false);
    expect(errors).toEqual([
      'audit queue full (2): dropped c event; 1 dropped in total',
      'audit queue full (2): dropped d event; 2 dropped in total',
    ]);
    const written: string[] = [];
    await q.flush(async (b) => { written.push(...b.map((e) => e.type)); });
    expect(written).toEqual(['a', 'b']);
    expect(q.enqueue(event('e'))).toBe(true); // room again after the flush
  });

  test('a failed write loses its batch, logs it, and never throws', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const q = new AuditQueue(10);
    q.enqueue(event('a'));
    await expect(q.flush(async () => { throw new Error('db down'); })).resolves.toBeUndefined();
    expect(q.dropped).toBe(1);
    expect(q.size).toBe(0);
  });

  test('a flush started while another writes waits for it: events are stored in queue order', async () => {
    const q = new AuditQueue(1000);
    const stored: string[] = [];
    q.enqueue(event('first'));
    const slow = q.flush(async (b) => { await new Promise((r) => setTimeout(r, 30)); stored.push(...b.map((e) => e.type)); });
    q.enqueue(event('second'));
    const fast = q.flush(async (b) => { stored.push(...b.map((e) => e.type)); });
    await Promise.all([slow, fast]);
    expect(stored).toEqual(['first', 'second']);
  });

  test('concurrent flushes never write an event twice', async () => {
    const q = new AuditQueue(1000);
    for (let i = 0; i < 300; i++) q.enqueue(event(`e${i}`));
    const written: string[] = [];
    const slowWrite = async (b: AuditEventRow[]) => { await new Promise((r) => setTimeout(r, 5)); written.push(...b.map((e) => e.type)); };
    await Promise.all([q.flush(slowWrite), q.flush(slowWrite), q.flush(slowWrite)]);
    expect(written.sort()).toEqual(Array.from({ length: 300 }, (_, i) => `e${i}`).sort());
  });
});
