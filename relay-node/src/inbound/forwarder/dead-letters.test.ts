// dead/ on a real spool: what bury() leaves, the count the heartbeat reports,
// and the listing `edgemail relay dead-letters` prints.
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSpool, type Spool } from '../../spool/index.js';
import { escapeControls, listDeadLetters, openDeadLetters } from './dead-letters.js';

let dir = '';
let spool: Spool<{ n: number }>;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-dead-letters-'));
  spool = await openSpool<{ n: number }>(join(dir, 'spool'));
});
afterEach(async () => {
  await spool.close();
  rmSync(dir, { recursive: true, force: true });
});

const bytesOf = (folder: string) => readdirSync(folder).reduce((sum, name) => sum + statSync(join(folder, name)).size, 0);

describe('dead letters', () => {
  it('counts what bury() moves, recounts the folder on refresh, and lists each message with its reason', async () => {
    expect(await listDeadLetters(spool.dir)).toEqual([]); // no dead/ yet
    const dead = await openDeadLetters(spool);
    expect(dead.tally()).toEqual({ count: 0, bytes: 0 });
    const a = await spool.write(Buffer.from('Subject: a\r\n\r\nfirst\r\n'), { n: 1 });
    const b = await spool.write(Buffer.from('Subject: b\r\n\r\nsecond, longer\r\n'), { n: 2 });
    await dead.bury(a.id, 'the edge refused POST /relay/v1/inbound (400): invalid meta: meta.rcpt_to.0: must be an address');
    await dead.bury(b.id, 'refused\nover two lines, naming x\u001b[2J\u009b\u2028');
    expect(await spool.list()).toEqual([]);
    const folder = join(spool.dir, 'dead');
    expect(dead.tally()).toEqual({ count: 2, bytes: bytesOf(folder) });

    const listed = await listDeadLetters(spool.dir);
    expect(listed.map((l) => [l.id, l.size, l.reason])).toEqual([
      [a.id, a.size, 'the edge refused POST /relay/v1/inbound (400): invalid meta: meta.rcpt_to.0: must be an address'],
      // Stored escaped: the reason may quote a sender's bytes, and is read on a terminal.
      [b.id, b.size, 'refused\\x0aover two lines, naming x\\x1b[2J\\x9b\\u2028'],
    ]);
    expect(Date.parse(listed[0]!.buried_at!)).toBeGreaterThan(Date.now() - 60_000);

    // An operator removes one by hand; a stray file is counted as bytes, not as a message.
    for (const ext of ['.eml', '.json', '.reason.txt']) rmSync(join(folder, a.id + ext));
    writeFileSync(join(folder, 'notes.txt'), 'looked at');
    expect(await dead.refresh()).toEqual({ count: 1, bytes: bytesOf(folder) });
    expect((await listDeadLetters(spool.dir)).map((l) => l.id)).toEqual([b.id]);
  });

  it('opens with what an earlier run left in dead/', async () => {
    const { id } = await spool.write(Buffer.from('Subject: kept\r\n\r\nx\r\n'), { n: 3 });
    await (await openDeadLetters(spool)).bury(id, 'invalid meta');
    const again = await openDeadLetters(spool);
    expect(again.tally()).toEqual({ count: 1, bytes: bytesOf(join(spool.dir, 'dead')) });
  });

  it('escapes control characters and nothing else, so an escaped reason is unchanged by escaping again', () => {
    expect(escapeControls('a\tb\r\n\u0000\u007f é ✓ \\x1b')).toBe('a\\x09b\\x0d\\x0a\\x00\\x7f é ✓ \\x1b');
    expect(escapeControls(escapeControls('x\u001b'))).toBe('x\\x1b');
  });
});
