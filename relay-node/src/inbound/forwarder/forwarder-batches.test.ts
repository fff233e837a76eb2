// The forwarding loop's batches over a real spool, with the edge calls
// replaced by functions (the edge's side: test/relay-forward-batch.test.ts):
// a lone message goes alone, a backlog goes in batches, each message leaves
// the spool on its own result only, and answers that cannot be trusted or an
// edge without the batch route send the messages one by one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectingLog, type LogLine } from '../../../test-support/inbound-harness.js';
import type { EncodedForward, InMemoryForward } from '../../edge/client.js';
import { EdgeRefusedError } from '../../edge/errors.js';
import type { SpooledMeta } from '../spool-store/spooled-message.js';
import type { ForwardAnswer, ForwardBatchAnswer } from '@edgemail/shared';
import { openSpool, type Spool } from '../../spool/index.js';
import { createForwarder, type Forwarder } from './forwarder.js';

const meta = (subject: string): SpooledMeta => ({
  format: 1, listener: 'inbound', received_at: '2026-11-26T02:00:00.000Z', session_id: 's1',
  client_ip: '192.0.2.9', client_port: 40000, helo: 'client.test', mail_from: 'ann@example.org', rcpt_to: [`${subject}@acme.test`],
  tls: null, auth: { spf: 'pass', dkim: 'none', dmarc: 'none', aligned: true, client_ip: '192.0.2.9' },
  dmarc_policy: null, smtp_rejected: false, trace_headers: '',
});
const message = (subject: string) => Buffer.from(`From: ann@example.org\r\nTo: ${subject}@acme.test\r\nSubject: ${subject}\r\n\r\nBody of ${subject}\r\n`);
const OK: ForwardAnswer = { inbound_emails: [{ id: 'r1', project_id: 'p1', status: 'received' }], duplicate: false };

let dir = '';
let spool: Spool<SpooledMeta>;
let forwarder: Forwarder | undefined;
let logs: LogLine[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-batches-'));
  spool = await openSpool<SpooledMeta>(join(dir, 'spool'));
  logs = [];
});
afterEach(async () => {
  await forwarder?.stop();
  forwarder = undefined;
  rmSync(dir, { recursive: true, force: true });
});

async function until(check: () => boolean | Promise<boolean>, ms = 5000) {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function spoolAll(subjects: string[]) {
  const ids: string[] = [];
  for (const s of subjects) ids.push((await spool.write(message(s), meta(s))).id);
  return ids;
}

function start(
  forward: (r: EncodedForward) => Promise<ForwardAnswer>,
  forwardBatch: (rs: InMemoryForward[]) => Promise<ForwardBatchAnswer>,
  idlePollMs = 50,
) {
  forwarder = createForwarder({
    spool, forward, forwardBatch, maxMessageSize: 26_214_400, log: collectingLog(logs), onFatal: () => undefined,
    backoff: { initialMs: 20, maxMs: 40 }, idlePollMs, concurrency: 1,
  });
  forwarder.start();
}

const stored = (r: InMemoryForward) => ({ status: 200 as const, spool_id: r.meta.spool_id, ...OK });

describe('forwarder batches', () => {
  it('sends a lone message alone, and a backlog as one batch', async () => {
    const singles: string[] = [];
    const batches: string[][] = [];
    const [lone] = await spoolAll(['lone']);
    start(async (r) => { singles.push(r.meta.spool_id); return OK; }, async (rs) => {
      batches.push(rs.map((r) => r.meta.spool_id));
      return { results: rs.map(stored) };
    }, 60_000); // it looks again only when told: the backlog is all spooled first

    await until(async () => (await spool.depth()) === 0);
    const backlog = await spoolAll(['a', 'b', 'c']);
    forwarder!.notify();
    await until(async () => (await spool.depth()) === 0);
    expect(singles).toEqual([lone]);
    expect(batches).toEqual([backlog]);
  });

  it('keeps a message the edge did not store, and forwards it again', async () => {
    const ids = await spoolAll(['a', 'b', 'c']);
    let calls = 0;
    const alone: string[] = [];
    start(async (r) => { alone.push(r.meta.spool_id); return OK; }, async (rs) => {
      calls++;
      // The second message: past the batch's storage calls (413), to be sent again on its own.
      return { results: rs.map((r, i) => (i === 1 && calls === 1 ? { status: 413, spool_id: r.meta.spool_id, error: 'not stored in this batch' } : stored(r))) };
    });
    await until(async () => (await spool.depth()) === 0);
    expect(alone).toEqual([ids[1]]);
  });

  it('does not trust results that do not line up with the batch: every message goes again on its own', async () => {
    const ids = await spoolAll(['a', 'b']);
    const alone: string[] = [];
    start(async (r) => { alone.push(r.meta.spool_id); return OK; }, async (rs) => ({ results: [...rs].reverse().map(stored) }));
    await until(async () => (await spool.depth()) === 0);
    expect(alone).toEqual(ids);
    expect(logs.some((l) => l.level === 'warn' && l.message.startsWith('a batched forward failed'))).toBe(true);
  });

  it('after a 404 for the batch route (an older edge), forwards one by one and tries no batch again for a while', async () => {
    let batchCalls = 0;
    const alone: string[] = [];
    const first = await spoolAll(['a', 'b']);
    start(async (r) => { alone.push(r.meta.spool_id); return OK; }, async () => {
      batchCalls++;
      throw new EdgeRefusedError('POST /relay/v1/inbound/batch', 404, 'not found');
    });
    await until(async () => (await spool.depth()) === 0);
    const second = await spoolAll(['c', 'd']);
    forwarder!.notify();
    await until(async () => (await spool.depth()) === 0);
    expect(batchCalls).toBe(1);
    expect(alone).toEqual([...first, ...second]);
  });
});
