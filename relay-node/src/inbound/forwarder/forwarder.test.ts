// The forwarding loop over a real spool, with the edge call replaced by a
// function (the HTTP side is tested in edge-client.test.ts and end to end).
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { collectingLog, type LogLine } from '../../../test-support/inbound-harness.js';
import type { ForwardRequest } from '../../edge/client.js';
import { EdgeRateLimitedError, EdgeRefusedError, EdgeUnavailableError, NodeRevokedError } from '../../edge/errors.js';
import type { SpooledMeta } from '../spool-store/spooled-message.js';
import type { ForwardAnswer } from '@edgemail/shared';
import { openSpool, type Spool } from '../../spool/index.js';
import { createForwarder, type Forwarder } from './forwarder.js';

const TRACE = 'Received: from client.test ([192.0.2.9])\r\n\tby mx.test with ESMTP id s1;\r\n\tThu, 26 Nov 2026 02:00:00 +0000\r\n';
const meta = (subject: string): SpooledMeta => ({
  format: 1, listener: 'inbound', received_at: '2026-11-26T02:00:00.000Z', session_id: 's1',
  client_ip: '192.0.2.9', client_port: 40000, helo: 'client.test', mail_from: 'ann@example.org', rcpt_to: [`${subject}@acme.test`],
  tls: null, auth: { spf: 'pass', dkim: 'none', dmarc: 'none', aligned: true, client_ip: '192.0.2.9' },
  dmarc_policy: null, smtp_rejected: false, trace_headers: TRACE,
});
const message = (subject: string) => Buffer.from(`From: ann@example.org\r\nTo: ${subject}@acme.test\r\nSubject: ${subject}\r\n\r\nBody of ${subject}\r\n`);
const OK: ForwardAnswer = { inbound_emails: [{ id: 'r1', project_id: 'p1', status: 'received' }], duplicate: false };
const fast = { initialMs: 20, maxMs: 40 };
/** `relay_node.inbound.max_message_size` (the default); the sizing tests use their own. */
const MAX_MESSAGE = 26_214_400;

let dir = '';
let spool: Spool<SpooledMeta>;
let forwarder: Forwarder | undefined;
let logs: LogLine[];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-forward-'));
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

function start(forward: (r: ForwardRequest, signal: AbortSignal) => Promise<ForwardAnswer>, onFatal: (e: Error) => void = () => undefined, concurrency?: number) {
  forwarder = createForwarder({ spool, forward, maxMessageSize: MAX_MESSAGE, log: collectingLog(logs), onFatal, backoff: fast, idlePollMs: 50, concurrency });
  forwarder.start();
  return forwarder;
}

describe('forwarder', () => {
  it('resumes what the spool holds, oldest first, and removes each message once the edge took it', async () => {
    const ids = [];
    for (const s of ['one', 'two', 'three']) ids.push((await spool.write(message(s), meta(s))).id);
    const seen: ForwardRequest[] = [];
    const raws: string[] = [];
    // One at a time, so arrival order is start order (with more, parsing times interleave them).
    start(async (r) => {
      seen.push(r);
      raws.push(await r.raw.text()); // file-backed: readable until the message leaves the spool
      return OK;
    }, undefined, 1);
    await until(async () => (await spool.depth()) === 0);
    expect(seen.map((r) => r.meta.spool_id)).toEqual(ids);
    const first = seen[0]!;
    const raw = raws[0]!;
    expect(raw).toBe(TRACE + message('one').toString());
    expect(first.raw.type).toBe('message/rfc822');
    expect(first.meta).toMatchObject({
      client_ip: '192.0.2.9', helo: 'client.test', mail_from: 'ann@example.org', rcpt_to: ['one@acme.test'], size: Buffer.byteLength(raw),
      auth: { spf: 'pass', aligned: true }, dmarc_policy: null, smtp_rejected: false,
      parsed: { ok: true, subject: 'one', text: 'Body of one\n', headers: { received: expect.stringContaining('client.test'), subject: 'one' } },
    });
  });

  it('starts on a newly spooled message when notified', async () => {
    let calls = 0;
    const f = start(async () => {
      calls++;
      return OK;
    });
    await new Promise((r) => setTimeout(r, 30));
    await spool.write(message('late'), meta('late'));
    f.notify();
    await until(async () => (await spool.depth()) === 0, 1000);
    expect(calls).toBe(1);
  });

  it('moves a message the edge refuses with 400 even as its raw bytes alone to dead/, and never sends it again', async () => {
    const { id } = await spool.write(message('bad'), meta('bad'));
    const sent: boolean[] = [];
    start(async (r) => {
      sent.push(r.meta.parsed.ok);
      throw new EdgeRefusedError('POST /relay/v1/inbound', 400, 'invalid meta');
    });
    await until(() => existsSync(join(spool.dir, 'dead', `${id}.eml`)));
    await until(async () => (await spool.depth()) === 0);
    await new Promise((r) => setTimeout(r, 100));
    expect(sent).toEqual([true, false]); // parsed, then raw-only, then never again
    expect(readdirSync(join(spool.dir, 'dead')).sort()).toEqual([`${id}.eml`, `${id}.json`, `${id}.reason.txt`]);
    expect(readFileSync(join(spool.dir, 'dead', `${id}.reason.txt`), 'utf8')).toContain('invalid meta');
    expect(logs.some((l) => l.level === 'error' && l.message.includes('dead/'))).toBe(true);
  });

  it('moves a message the edge refuses with any other 4xx (403, 409) to dead/ rather than retrying it forever; a 408 is retried', async () => {
    for (const status of [403, 409]) {
      const { id } = await spool.write(message(`bad${status}`), meta(`bad${status}`));
      const sent: boolean[] = [];
      const f = start(async (r) => {
        sent.push(r.meta.parsed.ok);
        throw new EdgeRefusedError('POST /relay/v1/inbound', status, `refused with ${status}`);
      });
      await until(() => existsSync(join(spool.dir, 'dead', `${id}.reason.txt`)));
      await f.stop();
      expect(sent).toEqual([true, false]);
      expect(readFileSync(join(spool.dir, 'dead', `${id}.reason.txt`), 'utf8')).toContain(`refused with ${status}`);
    }
    const { id } = await spool.write(message('slow'), meta('slow'));
    let tries = 0;
    start(async () => {
      if (++tries === 1) throw new EdgeUnavailableError('POST /relay/v1/inbound', 408, 'request timeout');
      return OK;
    });
    await until(async () => (await spool.depth()) === 0, 10_000);
    expect(tries).toBe(2);
    expect(existsSync(join(spool.dir, 'dead', `${id}.eml`))).toBe(false);
  });

  it('answers a 400 to its parsed parts by sending the raw message alone, stored failed naming why (control characters escaped), never to dead/', async () => {
    const { id } = await spool.write(message('odd'), meta('odd'));
    const seen: ForwardRequest[] = [];
    start(async (r) => {
      seen.push(r);
      if (r.meta.parsed.ok) throw new EdgeRefusedError('POST /relay/v1/inbound', 400, 'invalid meta: parsed.headers.x\u001b[2J: must be at most 998 characters');
      return OK;
    });
    await until(async () => (await spool.depth()) === 0);
    expect(seen.map((r) => r.meta.parsed.ok)).toEqual([true, false]);
    expect(seen[1]!.meta.parsed.error).toBe('the edge refused its parsed parts (the edge refused POST /relay/v1/inbound (400): invalid meta: parsed.headers.x\\x1b[2J: must be at most 998 characters); only the raw message is kept');
    expect(seen[1]!.meta).toMatchObject({ spool_id: id, rcpt_to: ['odd@acme.test'], parsed: { subject: '', headers: {}, attachments: [] } });
    expect(existsSync(join(spool.dir, 'dead'))).toBe(false);
  });

  it('forwards a recipient spooled with U-labels (before the upgrade) in A-labels, as the edge stores domains', async () => {
    await spool.write(message('old'), { ...meta('old'), rcpt_to: ['Ann@Bücher.test', 'bob@xn--bcher-kva.test'] });
    const seen: ForwardRequest[] = [];
    start(async (r) => {
      seen.push(r);
      return OK;
    });
    await until(async () => (await spool.depth()) === 0);
    expect(seen[0]!.meta.rcpt_to).toEqual(['Ann@xn--bcher-kva.test', 'bob@xn--bcher-kva.test']);
  });

  it('leaves out a recipient the edge cannot store (over 320 characters in A-labels), and says so; the others get the message', async () => {
    const long = `${'a'.repeat(150)}@${'ü.'.repeat(40)}test`; // 235 characters as sent, 475 in A-labels (ü is xn--tda)
    await spool.write(message('long'), { ...meta('long'), rcpt_to: [long, 'Ann@Bücher.test', 'ann@xn--bcher-kva.test'] });
    const seen: ForwardRequest[] = [];
    start(async (r) => {
      seen.push(r);
      return OK;
    });
    await until(async () => (await spool.depth()) === 0);
    expect(seen[0]!.meta.rcpt_to).toEqual(['Ann@xn--bcher-kva.test', 'ann@xn--bcher-kva.test']);
    expect(logs.find((l) => l.message === 'inbound recipients the edge cannot store are left out of the forward')?.fields).toMatchObject({ recipients: [`${'a'.repeat(150)}@${'xn--tda.'.repeat(40)}test`] });
  });

  it('sends a message whose parsed parts would exceed the edge\'s limits as its raw bytes alone, never to dead/', async () => {
    // Quotes double when JSON-escaped: the parsed text alone is over the edge's meta limit.
    const quoted = Buffer.from(`Subject: quotes\r\n\r\n${'"'.repeat(600_000)}\r\n`);
    const { id } = await spool.write(quoted, meta('quotes'));
    const seen: ForwardRequest[] = [];
    const raws: string[] = [];
    forwarder = createForwarder({
      spool, maxMessageSize: 1000, log: collectingLog(logs), onFatal: () => undefined, backoff: fast, idlePollMs: 50,
      forward: async (r) => {
        seen.push(r);
        raws.push(await r.raw.text());
        return OK;
      },
    });
    forwarder.start();
    await until(async () => (await spool.depth()) === 0);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.meta.parsed).toMatchObject({ ok: false, subject: '', text: '', attachments: [] });
    expect(seen[0]!.meta.parsed.error).toMatch(/^too large to forward parsed: its parsed text and headers take \d+ bytes, over the edge's 1049576; only the raw message is kept$/);
    expect(seen[0]!.attachments).toEqual([]);
    expect(raws[0]).toBe(TRACE + quoted.toString());
    expect(seen[0]!.meta.size).toBe(Buffer.byteLength(raws[0]!));
    expect(existsSync(join(spool.dir, 'dead', `${id}.eml`))).toBe(false);
  });

  it('answers a 413 by sending the raw message alone at once; a raw message still too large stays spooled', async () => {
    await spool.write(message('big'), meta('big'));
    const sent: boolean[] = [];
    let rawTooLarge = false;
    start(async (r) => {
      sent.push(r.meta.parsed.ok);
      if (r.meta.parsed.ok || rawTooLarge) throw new EdgeRefusedError('POST /relay/v1/inbound', 413, 'request body larger than 100 bytes');
      return OK;
    });
    await until(async () => (await spool.depth()) === 0);
    expect(sent).toEqual([true, false]);

    const { id } = await spool.write(message('huge'), meta('huge'));
    sent.length = 0;
    rawTooLarge = true;
    forwarder!.notify();
    await until(() => sent.length >= 4); // tried again and again (its own backoff), never buried
    expect(await spool.depth()).toBe(1);
    expect(existsSync(join(spool.dir, 'dead', `${id}.eml`))).toBe(false);
    expect(logs.some((l) => l.level === 'error' && l.message.includes('inbound.max_message_size is below this node'))).toBe(true);
    rawTooLarge = false;
    await until(async () => (await spool.depth()) === 0);
  });

  it('waits Retry-After on a 429 and keeps the message until the edge takes it', async () => {
    await spool.write(message('slow'), meta('slow'));
    const at: number[] = [];
    start(async () => {
      at.push(Date.now());
      if (at.length === 1) throw new EdgeRateLimitedError('POST /relay/v1/inbound', 300);
      return OK;
    });
    await until(async () => (await spool.depth()) === 0);
    expect(at).toHaveLength(2);
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(290);
  });

  it('backs off while the edge is unreachable and forwards everything once it is back', async () => {
    for (const s of ['a', 'b']) await spool.write(message(s), meta(s));
    let down = 3;
    const delivered: string[] = [];
    start(async (r) => {
      if (down-- > 0) throw new EdgeUnavailableError('POST /relay/v1/inbound', null, 'ECONNREFUSED');
      delivered.push(r.meta.parsed.subject);
      return OK;
    });
    await until(async () => (await spool.depth()) === 0);
    expect(delivered.sort()).toEqual(['a', 'b']);
  });

  it('logs one info line per message it forwards, naming the records; a DMARC refusal says so in that line', async () => {
    await spool.write(message('fine'), meta('fine'));
    await spool.write(message('refused'), { ...meta('refused'), smtp_rejected: true });
    start(async (r) => ({ inbound_emails: [{ id: `rec-${r.meta.parsed.subject}`, project_id: 'p1', status: r.meta.smtp_rejected ? 'rejected' : 'received' }], duplicate: false }), undefined, 1);
    await until(async () => (await spool.depth()) === 0);
    // The line follows the removal from the spool: wait for it rather than race it.
    await until(() => logs.filter((l) => l.level !== 'debug').length >= 2);
    expect(logs.filter((l) => l.level !== 'debug').map((l) => [l.message, (l.fields?.records as { id: string }[])[0]!.id])).toEqual([
      ['inbound message forwarded', 'rec-fine'],
      ['inbound message refused by DMARC policy (550 5.7.1); record kept', 'rec-refused'],
    ]);
    expect(logs[0]!.fields).toMatchObject({ from: 'ann@example.org', to: ['fine@acme.test'], client: '192.0.2.9', auth: { spf: 'pass', dkim: 'none', dmarc: 'none', aligned: true }, duplicate: false });
  });

  it('says an unreachable edge once per outage (each further wait is a debug line), and once that it answers again', async () => {
    for (const s of ['a', 'b']) await spool.write(message(s), meta(s));
    let down = 3;
    start(async () => {
      if (down-- > 0) throw new EdgeUnavailableError('POST /relay/v1/inbound', null, 'ECONNREFUSED');
      return OK;
    }, undefined, 1);
    await until(async () => (await spool.depth()) === 0);
    const said = logs.filter((l) => l.level !== 'debug' && l.message.startsWith('the edge'));
    expect(said.map((l) => `${l.level} ${l.message}`)).toEqual([
      'warn the edge is unreachable; messages stay spooled (said once until it answers again)',
      'info the edge takes inbound messages again',
    ]);
    expect(logs.filter((l) => l.level === 'debug' && l.message === 'the edge is unreachable; messages stay spooled')).toHaveLength(2);
  });

  it('ends a long wait for an unreachable edge as soon as a heartbeat gets through, but keeps a 429 wait', async () => {
    await spool.write(message('back'), meta('back'));
    let down = true;
    let calls = 0;
    forwarder = createForwarder({
      spool, maxMessageSize: MAX_MESSAGE, log: collectingLog(logs), onFatal: () => undefined, backoff: { initialMs: 60_000, maxMs: 60_000 }, idlePollMs: 50,
      forward: async () => {
        calls++;
        if (down) throw new EdgeUnavailableError('POST /relay/v1/inbound', null, 'ECONNREFUSED');
        return OK;
      },
    });
    forwarder.start();
    await until(() => calls === 1);
    down = false;
    forwarder.notify(); // a new message does not end the wait ...
    await new Promise((r) => setTimeout(r, 100));
    expect(calls).toBe(1);
    forwarder.resume(); // ... the edge answering again does
    await until(async () => (await spool.depth()) === 0, 1000);
  });

  it('lets other messages through while one keeps getting a 500', async () => {
    await spool.write(message('poison'), meta('poison'));
    await spool.write(message('fine'), meta('fine'));
    const attempts: string[] = [];
    start(async (r) => {
      attempts.push(r.meta.parsed.subject);
      if (r.meta.parsed.subject === 'poison') throw new EdgeUnavailableError('POST /relay/v1/inbound', 500, 'internal error');
      return OK;
    });
    await until(() => attempts.includes('fine'));
    await until(() => attempts.filter((s) => s === 'poison').length >= 2);
    expect(await spool.depth()).toBe(1);
  });

  it('stops on revocation, keeping the message, and says so', async () => {
    await spool.write(message('kept'), meta('kept'));
    let fatal: Error | null = null;
    start(async () => {
      throw new NodeRevokedError('POST /relay/v1/inbound');
    }, (e) => (fatal = e));
    await until(() => fatal !== null);
    expect(fatal).toBeInstanceOf(NodeRevokedError);
    expect(await spool.depth()).toBe(1);
  });

  it('on stop, aborts the forward in flight and leaves the message spooled', async () => {
    await spool.write(message('inflight'), meta('inflight'));
    let started = false;
    const f = start((_r, signal) => {
      started = true;
      // As fetch does: the abort rejects the request.
      return new Promise<ForwardAnswer>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    });
    await until(() => started);
    forwarder = undefined;
    await f.stop();
    expect(await spool.depth()).toBe(1);
  });
});
