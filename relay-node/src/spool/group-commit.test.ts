// The spool's fsyncs on real files, watched through its fsync hook: body and
// metadata are fsynced side by side, and concurrent writes share directory
// fsyncs without any write resolving before one that started after its rename.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { openSpool, type SpoolFsync } from './index.js';

let dir = '';
beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), 'spool-group-')), 'spool');
});
afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

/** Message files (renamed into place) in the spool directory right now. */
const renamed = () => readdirSync(dir).filter((name) => /\.(eml|json)$/.test(name));

test('50 concurrent writes: all durable and listed, fewer directory fsyncs than writes, each after its own renames', async () => {
  const WRITES = 50;
  const dirSyncs: { sawAtStart: Set<string>; done: boolean }[] = [];
  let fileSyncs = 0;
  let others: Promise<Written>[] = [];
  const fsync: SpoolFsync = async (target, realSync) => {
    if (target.kind === 'file') {
      fileSyncs++;
      return realSync();
    }
    const dirSync = { sawAtStart: new Set(renamed()), done: false };
    dirSyncs.push(dirSync);
    // The first write's directory fsync is under way: only now do the other
    // 49 start, and it is held until all of them have renamed their files.
    // None of them may count on it; they share the next one.
    if (dirSyncs.length === 1) {
      others = Array.from({ length: WRITES - 1 }, (_, i) => write(i + 1));
      for (let waited = 0; renamed().length < 2 * WRITES && waited < 10_000; waited += 5) await sleep(5);
      await sleep(20); // and their rename callbacks have run
    }
    await realSync();
    dirSync.done = true;
  };
  const spool = await openSpool<{ i: number }>(dir, { fsync });
  type Written = { id: string; covered: boolean };
  const write = (i: number): Promise<Written> =>
    spool.write(Buffer.from(`message ${i}\r\n`), Promise.resolve({ i })).then(({ id }) => ({
      id,
      // When the write resolves, a directory fsync that started after both its renames has completed.
      covered: dirSyncs.some((s) => s.done && s.sawAtStart.has(`${id}.eml`) && s.sawAtStart.has(`${id}.json`)),
    }));
  const first = await write(0);
  const written = [first, ...(await Promise.all(others))];

  expect(written).toHaveLength(WRITES);
  expect(written.filter((w) => !w.covered)).toEqual([]);
  expect(fileSyncs).toBe(2 * WRITES);
  // The first write's fsync, and one shared by the 49 that renamed while it ran.
  expect(dirSyncs.length).toBe(2);
  expect(dirSyncs[0]!.sawAtStart).toEqual(new Set([`${first.id}.eml`, `${first.id}.json`]));
  const ids = written.map((w) => w.id);
  expect(await spool.list()).toEqual([...ids].sort());
  for (const [i, id] of ids.entries()) expect((await spool.read(id)).meta).toEqual({ i });
});

test('without a held fsync, concurrent writes still share directory fsyncs', async () => {
  let dirSyncs = 0;
  const spool = await openSpool(dir, {
    fsync: async (target, sync) => {
      if (target.kind === 'directory') dirSyncs++;
      await sync();
    },
  });
  const written = await Promise.all(Array.from({ length: 50 }, (_, i) => spool.write(Buffer.from(`message ${i}`), { i })));
  expect(await spool.list()).toEqual(written.map((w) => w.id).sort());
  expect(dirSyncs).toBeGreaterThan(0);
  expect(dirSyncs).toBeLessThan(50);
});

test('body and metadata are fsynced side by side, not one after the other', async () => {
  let metaSyncStarted!: () => void;
  const metaSyncing = new Promise<void>((resolve) => { metaSyncStarted = resolve; });
  const spool = await openSpool(dir, {
    fsync: async (target, sync) => {
      if (target.path.endsWith('.json.tmp')) metaSyncStarted();
      // The body's fsync does not finish until the metadata's has begun.
      if (target.path.endsWith('.eml.tmp')) {
        await Promise.race([metaSyncing, sleep(5_000).then(() => { throw new Error('the metadata waited for the body fsync'); })]);
      }
      await sync();
    },
  });
  const { id } = await spool.write(Buffer.from('hello\r\n'), { n: 1 });
  expect(await spool.list()).toEqual([id]);
});

test('a failed directory fsync fails the writes that waited for it and leaves nothing; the next write gets a fresh one', async () => {
  let failNext = true;
  const spool = await openSpool(dir, {
    fsync: async (target, sync) => {
      if (target.kind === 'directory' && failNext) {
        failNext = false;
        throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' });
      }
      await sync();
    },
  });
  await expect(spool.write(Buffer.from('lost'), { n: 1 })).rejects.toMatchObject({ code: 'EIO' });
  expect(readdirSync(dir)).toEqual([]);
  const { id } = await spool.write(Buffer.from('kept'), { n: 2 });
  expect(await spool.list()).toEqual([id]);
});

test('a body that fails does not wait for metadata that never comes, and leaves nothing', async () => {
  const spool = await openSpool(dir);
  const failure = new Error('552 too big');
  const body = (async function* () { yield Buffer.alloc(1000); throw failure; })();
  await expect(spool.write(body, new Promise<never>(() => {}))).rejects.toBe(failure);
  expect(readdirSync(dir)).toEqual([]);
});

test('after close() a write fails and leaves nothing; what was written stays', async () => {
  const spool = await openSpool(dir);
  const { id } = await spool.write(Buffer.from('kept'), { n: 1 });
  await spool.close();
  await expect(spool.write(Buffer.from('too late'), { n: 2 })).rejects.toThrow(/closed/);
  expect(readdirSync(dir).sort()).toEqual([`${id}.eml`, `${id}.json`]);
  expect(await (await openSpool(dir)).list()).toEqual([id]);
});
