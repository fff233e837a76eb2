// The spool on real files in a temp directory, and a real process killed
// with SIGKILL right after it answered 250.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, onTestFinished, test } from 'vitest';
import { openSpool } from './open-spool.js';
import { SpoolEntryNotFoundError } from './spool-errors.js';
import { createSpoolId } from './spool-id.js';

let dir = '';
beforeEach(() => {
  dir = join(mkdtempSync(join(tmpdir(), 'spool-test-')), 'spool');
});
afterEach(() => rmSync(join(dir, '..'), { recursive: true, force: true }));

const meta = { mailFrom: 'a@example.test', rcptTo: ['b@example.test', 'c@example.test'], clientIp: '203.0.113.7', helo: 'mx.example.test', receivedAt: '2025-01-01T00:00:00.000Z', auth: { spf: 'pass' } };

async function text(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

describe('write, list, read, remove', () => {
  test('a message comes back as written, with its metadata', async () => {
    const spool = await openSpool<typeof meta>(dir);
    const { id, size } = await spool.write(Readable.from([Buffer.from('Subject: hi\r\n\r\n'), Buffer.from('hello\r\n')]), meta);
    expect(size).toBe(22);
    expect(await spool.list()).toEqual([id]);
    expect(await spool.depth()).toBe(1);
    const entry = await spool.read(id);
    expect(entry).toMatchObject({ id, meta, size: 22 });
    expect(await text(entry.openBody())).toBe('Subject: hi\r\n\r\nhello\r\n');
    await spool.remove(id);
    expect(await spool.list()).toEqual([]);
    expect(await spool.depth()).toBe(0);
    await expect(spool.read(id)).rejects.toBeInstanceOf(SpoolEntryNotFoundError);
    await spool.remove(id); // no-op
  });

  test('bodies may be a buffer, chunks, strings or an async generator; metadata may be a promise', async () => {
    const spool = await openSpool(dir);
    const many = Array.from({ length: 5000 }, (_, i) => `line ${i}\r\n`);
    const written = [
      await spool.write(Buffer.from('one buffer'), { n: 1 }),
      await spool.write([Buffer.from('two '), 'chunks'], { n: 2 }),
      await spool.write((async function* () { yield* many; })(), Promise.resolve({ n: 3 })),
    ];
    expect(await spool.list()).toEqual(written.map((w) => w.id));
    const bodies = await Promise.all(written.map(async (w) => text((await spool.read(w.id)).openBody())));
    expect(bodies).toEqual(['one buffer', 'two chunks', many.join('')]);
    expect((await spool.read(written[2]!.id)).meta).toEqual({ n: 3 });
  });

  test('concurrent writes all land, listed oldest first', async () => {
    const spool = await openSpool(dir);
    const written = await Promise.all(Array.from({ length: 40 }, (_, i) => spool.write(Buffer.from(`message ${i}`), { i })));
    const ids = written.map((w) => w.id);
    expect(new Set(ids).size).toBe(40);
    expect(await spool.list()).toEqual([...ids].sort());
    expect(await spool.list()).toEqual(ids); // made in call order
  });

  test('files are 0600 and the directory 0700', async () => {
    const spool = await openSpool(dir);
    const { id } = await spool.write(Buffer.from('x'), {});
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(statSync(join(dir, `${id}.eml`)).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, `${id}.json`)).mode & 0o777).toBe(0o600);
  });

  test('an id that is not a spool id never reaches the file system', async () => {
    const spool = await openSpool(dir);
    await expect(spool.read('../../etc/passwd')).rejects.toBeInstanceOf(SpoolEntryNotFoundError);
  });
});

describe('failures leave nothing behind', () => {
  class BodyError extends Error {}

  test('an error from the body is rethrown as it came', async () => {
    const spool = await openSpool(dir);
    const failure = new BodyError('552 too big');
    const body = (async function* () { yield Buffer.alloc(100_000); throw failure; })();
    await expect(spool.write(body, meta)).rejects.toBe(failure);
    expect(readdirSync(dir)).toEqual([]);
  });

  test('a rejected metadata promise', async () => {
    const spool = await openSpool(dir);
    await expect(spool.write(Buffer.from('x'), Promise.reject(new Error('verdicts failed')))).rejects.toThrow('verdicts failed');
    expect(readdirSync(dir)).toEqual([]);
  });

  test('metadata that is not JSON', async () => {
    const spool = await openSpool(dir);
    await expect(spool.write(Buffer.from('x'), { size: 1n })).rejects.toThrow(TypeError);
    expect(readdirSync(dir)).toEqual([]);
  });
});

test('open clears temp files and half-messages, keeps complete ones and files not its own', async () => {
  const first = await openSpool(dir);
  const { id } = await first.write(Buffer.from('complete'), meta);
  const [tempId, bodyOnly, metaOnly] = [createSpoolId(), createSpoolId(), createSpoolId()];
  writeFileSync(join(dir, `${tempId}.eml.tmp`), 'half a mes');
  writeFileSync(join(dir, `${tempId}.json.tmp`), '{"mailFr');
  writeFileSync(join(dir, `${bodyOnly}.eml`), 'renamed, metadata never was');
  writeFileSync(join(dir, `${metaOnly}.json`), '{}');
  writeFileSync(join(dir, 'NOTES'), 'an operator file');

  const spool = await openSpool(dir);
  expect(await spool.list()).toEqual([id]);
  expect(readdirSync(dir).sort()).toEqual([`${id}.eml`, `${id}.json`, 'NOTES'].sort());
  expect(await text((await spool.read(id)).openBody())).toBe('complete');
});

test.each(['pair', 'single'] as const)('a process killed with SIGKILL right after "250" leaves that message whole (%s layout)', async (layout) => {
  const size = 3 * 1024 * 1024 + 17;
  const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./spool-crash-child.ts', import.meta.url)), dir, String(size), layout], {
    cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.once('exit', (_code, signal) => resolve(signal)));
  onTestFinished(() => { child.kill('SIGKILL'); });
  const id = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (data: string) => {
      out += data;
      const match = /^250 (\S+)\n/.exec(out);
      if (match) resolve(match[1]!);
    });
    void exited.then(() => reject(new Error(`child exited before answering: ${out}`)));
  });
  // Let the second write get under way, so the kill lands in the middle of it.
  while (!readdirSync(dir).some((name) => name.endsWith(layout === 'single' ? '.msg.tmp' : '.eml.tmp'))) await new Promise((r) => setTimeout(r, 5));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');

  const spool = await openSpool(dir, { layout });
  expect(await spool.list()).toEqual([id]);
  const entry = await spool.read(id);
  expect(entry.meta).toEqual({ mailFrom: 'a@example.test', rcptTo: ['b@example.test'], clientIp: '203.0.113.7' });
  expect(entry.size).toBe(size);
  const expected = createHash('sha256');
  for (let offset = 0; offset < size; offset += 65536) {
    const chunk = Buffer.alloc(Math.min(65536, size - offset));
    for (let i = 0; i < chunk.length; i++) chunk[i] = (offset + i) % 251;
    expected.update(chunk);
  }
  const actual = createHash('sha256');
  for await (const chunk of entry.openBody()) actual.update(chunk as Buffer);
  expect(actual.digest('hex')).toBe(expected.digest('hex'));
  expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
});

describe('the one-file layout (layout: single)', () => {
  test('one <id>.msg (0600) per message: written, listed, read back with its metadata, removed', async () => {
    const spool = await openSpool(dir, { layout: 'single' });
    const { id, size } = await spool.write(Readable.from([Buffer.from('Subject: hi\r\n\r\n'), 'hello\r\n']), Promise.resolve(meta));
    expect(size).toBe(22);
    expect(readdirSync(dir)).toEqual([`${id}.msg`]);
    expect(statSync(join(dir, `${id}.msg`)).mode & 0o777).toBe(0o600);
    expect(await spool.list()).toEqual([id]);
    const entry = await spool.read(id);
    expect(entry).toMatchObject({ id, meta, size: 22 });
    expect(await text(entry.openBody())).toBe('Subject: hi\r\n\r\nhello\r\n');
    // An empty body, and one that looks like a trailer, come back as written.
    const empty = await spool.write(Buffer.alloc(0), { n: 0 });
    const tricky = await spool.write(Buffer.from('\nEDGEMAIL-SPOOL-META 0000000002\n'), { n: 1 });
    expect(await text((await spool.read(empty.id)).openBody())).toBe('');
    expect((await spool.read(tricky.id)).meta).toEqual({ n: 1 });
    expect(await text((await spool.read(tricky.id)).openBody())).toBe('\nEDGEMAIL-SPOOL-META 0000000002\n');
    await spool.remove(id);
    expect(await spool.list()).toEqual([empty.id, tricky.id]);
    await expect(spool.read(id)).rejects.toBeInstanceOf(SpoolEntryNotFoundError);
    await spool.remove(id); // no-op
  });

  test('failures leave nothing: a body error (as it came), a rejected or non-JSON metadata', async () => {
    const spool = await openSpool(dir, { layout: 'single' });
    const failure = new Error('552 too big');
    await expect(spool.write((async function* () { yield Buffer.alloc(100_000); throw failure; })(), meta)).rejects.toBe(failure);
    await expect(spool.write(Buffer.from('x'), Promise.reject(new Error('verdicts failed')))).rejects.toThrow('verdicts failed');
    await expect(spool.write(Buffer.from('x'), { size: 1n })).rejects.toThrow(TypeError);
    expect(readdirSync(dir)).toEqual([]);
  });

  test('either layout reads, lists and removes the other\'s messages (a spool written before a change of layout); open clears a one-file temp', async () => {
    const pairs = await openSpool(dir);
    const old = await pairs.write(Buffer.from('written as a pair'), { n: 1 });
    const ones = await openSpool(dir, { layout: 'single' });
    const fresh = await ones.write(Buffer.from('written as one file'), { n: 2 });
    writeFileSync(join(dir, `${createSpoolId()}.msg.tmp`), 'half a mes');
    for (const spool of [await openSpool(dir), await openSpool(dir, { layout: 'single' })]) {
      expect(await spool.list()).toEqual([old.id, fresh.id]);
      expect(await text((await spool.read(old.id)).openBody())).toBe('written as a pair');
      expect((await spool.read(fresh.id)).meta).toEqual({ n: 2 });
      expect(await text((await spool.read(fresh.id)).openBody())).toBe('written as one file');
    }
    expect(readdirSync(dir).sort()).toEqual([`${old.id}.eml`, `${old.id}.json`, `${fresh.id}.msg`].sort());
    await ones.remove(old.id);
    await pairs.remove(fresh.id);
    expect(readdirSync(dir)).toEqual([]);
  });

  test('one file fsync and one rename per message (the pair layout: two of each)', async () => {
    const calls: string[] = [];
    const spool = await openSpool(dir, { layout: 'single', fsync: async (target, fsync) => { calls.push(target.kind); await fsync(); } });
    await spool.write(Buffer.from('x'), {});
    expect(calls).toEqual(['file', 'directory']);
  });
});
