import { afterEach, describe, expect, it, vi } from 'vitest';
import { removeStoredObjects } from './remove-objects.js';

/** An in-memory stand-in for the parts of R2Bucket used here, listing `pageSize` keys at a time. */
function fakeBucket(keys: string[], pageSize = 2, failDelete = false) {
  const stored = new Set(keys);
  const bucket = {
    stored,
    async list({ prefix, cursor }: { prefix: string; cursor?: string }) {
      const matching = [...stored].filter((k) => k.startsWith(prefix)).sort();
      const start = cursor ? Number(cursor) : 0;
      const page = matching.slice(start, start + pageSize);
      const truncated = start + pageSize < matching.length;
      return { objects: page.map((key) => ({ key })), truncated, cursor: truncated ? String(start + pageSize) : undefined };
    },
    async delete(key: string | string[]) {
      if (failDelete) throw new Error('R2 unavailable');
      for (const k of Array.isArray(key) ? key : [key]) stored.delete(k);
    },
  };
  return bucket as typeof bucket & R2Bucket;
}

afterEach(() => { vi.restoreAllMocks(); });

describe('removeStoredObjects', () => {
  it('removes every object under the prefix across listing pages, and nothing else', async () => {
    const bucket = fakeBucket([
      'inbound/p/s1/raw.eml', 'inbound/p/s1/attachments/0', 'inbound/p/s1/attachments/1', 'inbound/p/s1/attachments/2',
      'inbound/p/s10/raw.eml', // a spool id that starts with the other: not under its prefix
      'inbound/q/s1/raw.eml', // the same message in another project
    ]);
    expect(await removeStoredObjects(bucket, 'inbound/p/s1/', 'inbound/p/s1/raw.eml', 'inbound email x')).toBe(true);
    expect([...bucket.stored].sort()).toEqual(['inbound/p/s10/raw.eml', 'inbound/q/s1/raw.eml']);
  });

  it('adds the slash to a prefix without one', async () => {
    const bucket = fakeBucket(['inbound/p/s1/raw.eml', 'inbound/p/s10/raw.eml']);
    await removeStoredObjects(bucket, 'inbound/p/s1', null, 'inbound email x');
    expect([...bucket.stored]).toEqual(['inbound/p/s10/raw.eml']);
  });

  it('also removes a raw key stored outside the prefix', async () => {
    const bucket = fakeBucket(['legacy/raw-1.eml', 'inbound/p/s1/attachments/0']);
    await removeStoredObjects(bucket, 'inbound/p/s1/', 'legacy/raw-1.eml', 'inbound email x');
    expect(bucket.stored.size).toBe(0);
  });

  it('logs a failure naming the record, and does not throw', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const bucket = fakeBucket(['inbound/p/s1/raw.eml'], 2, true);
    expect(await removeStoredObjects(bucket, 'inbound/p/s1/', null, 'inbound email 42')).toBe(false);
    expect(logged).toHaveBeenCalledWith('inbound email 42: stored objects not removed: R2 unavailable');
    expect(bucket.stored.size).toBe(1);
  });
});
