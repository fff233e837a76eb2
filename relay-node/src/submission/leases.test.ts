import { describe, expect, test } from 'vitest';
import type { SubmissionLeaseAnswer } from '@edgemail/shared';
import { createLeaseBook, type Lease } from './leases.js';

const granted = (remaining: number | null, ttl_ms = 60_000): SubmissionLeaseAnswer =>
  ({ ok: true, project_id: 'p1', sandbox: false, domains: ['news.test'], remaining, ttl_ms });

describe('createLeaseBook', () => {
  test('one request per key at a time; the lease is held until its ttl runs out', async () => {
    let asked = 0;
    const book = createLeaseBook(async () => { asked++; return granted(null, 50); });
    const [a, b] = await Promise.all([book.get('k', '127.0.0.1'), book.get('k', '127.0.0.1')]);
    expect(asked).toBe(1);
    expect(a).toBe(b);
    expect(book.current('k', '127.0.0.1')).toBe(a);
    expect(book.current('k', '198.51.100.7')).toBeNull(); // another address: the key's allowed_ips are judged for it
    await new Promise((r) => setTimeout(r, 60));
    expect(book.current('k', '127.0.0.1')).toBeNull();
    await book.get('k', '127.0.0.1');
    expect(asked).toBe(2);
  });

  test('a refused key holds no lease: the next message asks again', async () => {
    const answers: SubmissionLeaseAnswer[] = [{ ok: false, reason: 'revoked', message: 'API key revoked' }, granted(null)];
    const book = createLeaseBook(async () => answers.shift()!);
    expect(await book.get('k', '127.0.0.1')).toEqual({ ok: false, reason: 'revoked', message: 'API key revoked' });
    expect(book.current('k', '127.0.0.1')).toBeNull();
    expect(await book.get('k', '127.0.0.1')).toMatchObject({ projectId: 'p1' });
  });

  test('the allowance: taken per recipient, never past it; what is not handed over yet counts against a new lease', async () => {
    const book = createLeaseBook(async () => granted(5));
    const lease = await book.get('k', '127.0.0.1') as Lease;
    expect(book.take(lease, 3)).toBe(true);
    expect(book.take(lease, 3)).toBe(false);
    expect(book.take(lease, 2)).toBe(true);
    // The edge still says 5 left (nothing committed yet): 5 pending leave none.
    const fresh = await book.get('k', '127.0.0.1', { fresh: true }) as Lease;
    expect(fresh.available).toBe(0);
    book.settle('p1', 5);
    expect((await book.get('k', '127.0.0.1', { fresh: true }) as Lease).available).toBe(5);
  });
});
