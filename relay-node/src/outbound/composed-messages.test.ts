// One composition per message: the jobs of one send's recipients share the
// signed bytes (each still delivered to its own recipient, the signature
// verified by mailauth with the key from a real DNS server); a job whose
// message or key differs in anything gets bytes of its own.
import { authenticate } from 'mailauth';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../test-support/dns-server.js';
import { makeDkimKey, makeJob } from '../../test-support/jobs.js';
import { startReceiver, type Receiver } from '../../test-support/receiver.js';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import type { Log } from '../log.js';
import { composeSignedMessage } from './compose.js';
import { ComposedMessages } from './composed-messages.js';
import { processJob, type ProcessJobDeps } from './process-job.js';

const silent: Log = { info() {}, warn() {}, error() {} };
const key = makeDkimKey('rsa');
const otherKey = makeDkimKey('rsa');

/** `compose` for `job`, counting its calls. */
function counted(job: Parameters<typeof composeSignedMessage>[0]) {
  const calls = { n: 0 };
  return { calls, compose: () => { calls.n++; return composeSignedMessage(job, { signTime: new Date() }); } };
}

describe('ComposedMessages', () => {
  test('the recipients of one message share one composition; another message, or another key, composes its own', async () => {
    const cache = new ComposedMessages();
    const message = { message_id: '<shared@acme.test>', to: ['ann@dest.test', 'bob@dest.test'], subject: 'one message' };
    const ann = makeJob('ann@dest.test', { dkim: key.dkim, message });
    const bob = makeJob('bob@dest.test', { dkim: key.dkim, message });
    const a = counted(ann);
    const b = counted(bob);
    const [first, second] = await Promise.all([cache.of(ann, a.compose), cache.of(bob, b.compose)]);
    expect(a.calls.n + b.calls.n).toBe(1);
    expect(second).toBe(first);

    const other = makeJob('carl@dest.test', { dkim: key.dkim, message: { ...message, subject: 'one messagE' } });
    const o = counted(other);
    expect(await cache.of(other, o.compose)).not.toBe(first);
    expect(o.calls.n).toBe(1);

    const resigned = makeJob('dora@dest.test', { dkim: otherKey.dkim, message });
    const r = counted(resigned);
    await cache.of(resigned, r.compose);
    expect(r.calls.n).toBe(1);
    expect(cache.size).toBe(3);
  });

  test('a failure is not kept: the next job composes again', async () => {
    const cache = new ComposedMessages();
    const job = makeJob('ann@dest.test', { dkim: key.dkim });
    await expect(cache.of(job, () => Promise.reject(new Error('no')))).rejects.toThrow('no');
    const again = counted(job);
    await cache.of(job, again.compose);
    expect(again.calls.n).toBe(1);
  });

  test('bytes are kept for ttlMs, and within maxBytes (the oldest let go first; a larger message not at all)', async () => {
    const short = new ComposedMessages({ ttlMs: 50 });
    const job = makeJob('ann@dest.test');
    const first = counted(job);
    await short.of(job, first.compose);
    await new Promise((r) => setTimeout(r, 80));
    const later = counted(job);
    await short.of(job, later.compose);
    expect(later.calls.n).toBe(1);

    const small = new ComposedMessages({ maxBytes: 1000 });
    const bytesOf = (n: number) => () => Promise.resolve(Buffer.alloc(n));
    const jobs = [makeJob('a@dest.test'), makeJob('b@dest.test'), makeJob('c@dest.test')];
    await small.of(jobs[0]!, bytesOf(400));
    await small.of(jobs[1]!, bytesOf(400));
    await small.of(jobs[2]!, bytesOf(400));
    expect(small.size).toBe(2);
    let composedAgain = 0;
    await small.of(jobs[0]!, () => { composedAgain++; return Promise.resolve(Buffer.alloc(400)); });
    expect(composedAgain).toBe(1);
    await small.of(makeJob('big@dest.test'), bytesOf(2000));
    await new Promise((r) => setImmediate(r));
    expect(small.size).toBe(2);
  });
});

describe('processJob with a shared composition', () => {
  let dns: TestDnsServer;
  let receiver: Receiver;
  let deps: ProcessJobDeps;

  beforeAll(async () => {
    dns = await startDnsServer({
      'dest.test': { MX: [{ preference: 10, exchange: 'mx1.dest.test' }] },
      'mx1.dest.test': { A: ['127.0.0.1'] },
      [key.name]: { TXT: [key.record] },
    });
    receiver = await startReceiver();
    deps = {
      settings: { captureDir: '', smarthost: '', mxPort: receiver.port, requireTls: false, allowPrivateMx: true },
      resolve: createDnsResolver([dns.address], { cache: false }),
      hostName: 'relay.acme.test',
      log: silent,
      composed: new ComposedMessages(),
    };
  });

  afterAll(async () => {
    await receiver?.close();
    await dns?.close();
  });

  test('each recipient gets the message once, in the same signed bytes, and the signature verifies', async () => {
    const message = { message_id: '<three@acme.test>', to: ['r1@dest.test', 'r2@dest.test', 'r3@dest.test'], subject: 'to three' };
    const jobs = message.to.map((to) => makeJob(to, { dkim: key.dkim, message }));
    const results = await Promise.all(jobs.map((job) => processJob(job, deps)));
    expect(results.map((r) => r.outcome)).toEqual(['sent', 'sent', 'sent']);
    const arrived = receiver.messages.filter((m) => m.bytes.includes('<three@acme.test>'));
    expect(arrived.map((m) => m.rcptTo[0]).sort()).toEqual(message.to);
    expect(new Set(arrived.map((m) => m.bytes.toString('base64'))).size).toBe(1);
    const verdict = await authenticate(arrived[0]!.bytes, {
      ip: '127.0.0.1', helo: 'relay.acme.test', sender: 'news@acme.test', mta: 'mx.test',
      resolver: createDnsResolver([dns.address], { cache: false }), disableArc: true, disableBimi: true,
    });
    expect((verdict.dkim.results ?? []).map((r) => [r.signingDomain, r.status.result])).toEqual([['acme.test', 'pass']]);
  });
});
