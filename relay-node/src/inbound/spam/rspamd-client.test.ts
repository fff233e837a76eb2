// The rspamd client against small HTTP servers playing rspamd: what it sends,
// how it reads the answer, and when it gives up. The real rspamd is in
// test/inbound-spam.test.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createRspamdClient, envelopeHeaders, parseCheckv2, SpamCheckError } from './rspamd-client.js';
import { refusedByEveryProject } from './spam-check.js';

const envelope = { ip: '192.0.2.1', helo: 'mail.example.org', from: 'ann@example.org', rcpt: ['bob@acme.test', 'eve@acme.test'], queueId: 'q1' };
const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
});

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const failure = (promise: Promise<unknown>) => promise.then(() => { throw new Error('expected a failure'); }, (err: unknown) => err as SpamCheckError);

describe('parseCheckv2', () => {
  it('reads the score, rspamd\'s reject score, the action and the symbols, heaviest first', () => {
    const spam = parseCheckv2(JSON.stringify({
      is_skipped: false, score: 6.300000, required_score: 15.0, action: 'add header',
      symbols: {
        MIME_GOOD: { name: 'MIME_GOOD', score: -0.1 }, RDNS_NONE: { name: 'RDNS_NONE', score: 1.0 },
        HFILTER_HOSTNAME_UNKNOWN: { name: 'HFILTER_HOSTNAME_UNKNOWN', score: 2.5 }, FROM_HAS_DN: { name: 'FROM_HAS_DN', score: 0 },
      },
    }));
    expect(spam).toEqual({ score: 6.3, required_score: 15, action: 'add header', symbols: ['HFILTER_HOSTNAME_UNKNOWN', 'RDNS_NONE', 'FROM_HAS_DN', 'MIME_GOOD'] });
  });

  it('takes GTUBE\'s pre-result and an answer without required_score or symbols', () => {
    expect(parseCheckv2('{"is_skipped":true,"score":15.0,"required_score":15.0,"action":"reject","symbols":{"GTUBE":{"name":"GTUBE","score":0.0}}}'))
      .toEqual({ score: 15, required_score: 15, action: 'reject', symbols: ['GTUBE'] });
    expect(parseCheckv2('{"score":-1.25,"action":"no action"}')).toEqual({ score: -1.25, required_score: null, action: 'no action', symbols: [] });
  });

  it('refuses what is not a verdict', () => {
    for (const text of ['not json', '[]', '{"action":"reject"}', '{"score":"5","action":"reject"}', '{"score":1}', '{"error":"bad request"}']) {
      expect(() => parseCheckv2(text), text).toThrow(SpamCheckError);
    }
  });

  it('keeps at most 200 symbols', () => {
    const symbols = Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`S${i}`, { score: i }]));
    const spam = parseCheckv2(JSON.stringify({ score: 1, action: 'no action', symbols }));
    expect(spam.symbols).toHaveLength(200);
    expect(spam.symbols[0]).toBe('S299');
  });
});

describe('envelopeHeaders', () => {
  it('names the envelope as rspamd reads it, one Rcpt per recipient, printable ASCII only', () => {
    expect(envelopeHeaders({ ...envelope, helo: 'evil\r\nX-Injected: 1', from: '' })).toEqual({
      'IP': '192.0.2.1', 'Helo': 'evil??X-Injected: 1', 'Queue-Id': 'q1', 'Rcpt': ['bob@acme.test', 'eve@acme.test'], 'Transfer-Encoding': 'chunked',
    });
  });
});

describe('createRspamdClient', () => {
  it('streams the message to /checkv2 with the envelope and reads the verdict', async () => {
    let seen: { url?: string; headers?: IncomingMessage['headersDistinct']; body?: string } = {};
    const url = await serve((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c)).on('end', () => {
        seen = { url: req.url, headers: req.headersDistinct, body: Buffer.concat(chunks).toString() };
        res.end('{"score":2.5,"required_score":15,"action":"no action","symbols":{"A":{"score":2.5}}}');
      });
    });
    const check = createRspamdClient({ url, timeoutMs: 2000 });
    const message = new PassThrough();
    const verdict = check(message, envelope);
    message.write('Subject: hi\r\n\r\n');
    setTimeout(() => message.end('body\r\n'), 20);
    expect(await verdict).toEqual({ score: 2.5, required_score: 15, action: 'no action', symbols: ['A'] });
    expect(seen.url).toBe('/checkv2');
    expect(seen.body).toBe('Subject: hi\r\n\r\nbody\r\n');
    expect(seen.headers!['ip']).toEqual(['192.0.2.1']);
    expect(seen.headers!['helo']).toEqual(['mail.example.org']);
    expect(seen.headers!['from']).toEqual(['ann@example.org']);
    expect(seen.headers!['rcpt']).toEqual(['bob@acme.test', 'eve@acme.test']);
    expect(seen.headers!['queue-id']).toEqual(['q1']);
    check.close();
  });

  it('gives up after the timeout once the message has ended and rspamd does not answer', async () => {
    const url = await serve((req) => { req.resume(); }); // reads, never answers
    const check = createRspamdClient({ url, timeoutMs: 300 });
    const started = Date.now();
    const err = await failure(check(Readable.from([Buffer.from('Subject: x\r\n\r\nbody\r\n')]), envelope));
    expect(err).toBeInstanceOf(SpamCheckError);
    expect(err.reason).toBe('timeout');
    expect(Date.now() - started).toBeGreaterThanOrEqual(280);
    expect(Date.now() - started).toBeLessThan(2000);
    check.close();
  });

  it('gives up when rspamd leaves the message unread for the timeout', async () => {
    const url = await serve((req) => { req.pause(); }); // never reads the body
    const check = createRspamdClient({ url, timeoutMs: 300 });
    const message = new PassThrough();
    const checking = check(message, envelope);
    const chunk = Buffer.alloc(1 << 20, 'a');
    // Writes until the request's buffers are full: the message is held back.
    for (let i = 0; i < 64 && message.write(chunk); i++) await new Promise((r) => setImmediate(r));
    const err = await failure(checking);
    expect(err.reason).toBe('timeout');
    check.close();
  });

  it('says unreachable when nothing listens, and error on a 5xx or a broken answer', async () => {
    const closed = await serve(() => undefined);
    await new Promise((r) => { servers[0]!.close(r); });
    servers.length = 0;
    const message = () => Readable.from([Buffer.from('Subject: x\r\n\r\nbody\r\n')]);
    expect((await failure(createRspamdClient({ url: closed, timeoutMs: 1000 })(message(), envelope))).reason).toBe('unreachable');

    const erring = await serve((req, res) => { req.resume(); req.on('end', () => { res.statusCode = 500; res.end('{"error":"oops"}'); }); });
    const err = await failure(createRspamdClient({ url: erring, timeoutMs: 1000 })(message(), envelope));
    expect(err.reason).toBe('error');
    expect(err.message).toContain('500');

    const garbled = await serve((req, res) => { req.resume(); req.on('end', () => res.end('<html>')); });
    expect((await failure(createRspamdClient({ url: garbled, timeoutMs: 1000 })(message(), envelope))).reason).toBe('error');
  });
});

describe('refusedByEveryProject', () => {
  const thresholds: Record<string, number> = { 'acme.test': 10, 'globex.test': 20 };
  const rejectScore = (domain: string) => thresholds[domain] ?? null;
  it('refuses only when every recipient domain\'s project would', () => {
    expect(refusedByEveryProject(15, ['a@acme.test', 'b@ACME.test'], rejectScore)).toBe(true);
    expect(refusedByEveryProject(9.99, ['a@acme.test'], rejectScore)).toBe(false);
    expect(refusedByEveryProject(15, ['a@acme.test', 'b@globex.test'], rejectScore)).toBe(false);
    expect(refusedByEveryProject(25, ['a@acme.test', 'b@globex.test'], rejectScore)).toBe(true);
    expect(refusedByEveryProject(99, ['a@acme.test', 'c@initech.test'], rejectScore)).toBe(false);
    expect(refusedByEveryProject(99, [], rejectScore)).toBe(false);
  });
});
