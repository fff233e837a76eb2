// Composing and signing in worker threads (compose-pool.ts): a message
// composed and signed in a worker, delivered to a real SMTP receiver, passes
// mailauth's DKIM verification with the key published in a real DNS server; a
// worker that dies is replaced and its messages are composed again, none lost;
// a message that takes down every worker is given up (deferred, naming it)
// and the pool goes on.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticate } from 'mailauth';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../test-support/dns-server.js';
import { makeDkimKey, makeJob } from '../../test-support/jobs.js';
import { startReceiver, type Receiver } from '../../test-support/receiver.js';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import type { Log } from '../log.js';
import { composeThreadsFor, createComposePool, type ComposePool, type ComposePoolOptions } from './compose-pool.js';
import { processJob, type ProcessJobDeps } from './process-job.js';

const key = makeDkimKey('rsa');
const crashingWorker = new URL('../../test-support/crashing-compose-worker.ts', import.meta.url);
let dns: TestDnsServer;
let receiver: Receiver;
let scratch: string;
let warnings: { message: string; fields?: Record<string, unknown> }[] = [];
const pools: ComposePool[] = [];
const log: Log = { info() {}, warn: (message, fields) => warnings.push({ message, fields }), error() {} };

beforeAll(async () => {
  dns = await startDnsServer({
    'dest.test': { MX: [{ preference: 10, exchange: 'mx1.dest.test' }] },
    'mx1.dest.test': { A: ['127.0.0.1'] },
    [key.name]: { TXT: [key.record] },
  });
  receiver = await startReceiver();
  scratch = mkdtempSync(join(tmpdir(), 'compose-pool-'));
});

afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
  warnings = [];
});

afterAll(async () => {
  await receiver?.close();
  await dns?.close();
  rmSync(scratch, { recursive: true, force: true });
});

function pool(options: ComposePoolOptions = {}): ComposePool {
  const p = createComposePool({ size: 1, log, ...options });
  pools.push(p);
  return p;
}

function deps(composer: ComposePool): ProcessJobDeps {
  return {
    settings: { captureDir: '', smarthost: '', mxPort: receiver.port, requireTls: false, allowPrivateMx: true },
    resolve: createDnsResolver([dns.address], { cache: false }),
    hostName: 'relay.acme.test',
    log,
    compose: composer.compose,
  };
}

/** mailauth's DKIM verdict on what the receiver got for `messageId`, and how many copies arrived. */
async function arrived(messageId: string) {
  const copies = receiver.messages.filter((m) => m.bytes.includes(messageId));
  const verdict = copies[0] && await authenticate(copies[0].bytes, {
    ip: '127.0.0.1', helo: 'relay.acme.test', sender: 'news@acme.test', mta: 'mx.test',
    resolver: createDnsResolver([dns.address], { cache: false }), disableArc: true, disableBimi: true,
  });
  return { copies: copies.length, dkim: verdict?.dkim.results?.map((r) => [r.signingDomain, r.status.result]) ?? [] };
}

describe('compose pool', () => {
  test('a message composed and signed in a worker thread is delivered and passes DKIM verification', async () => {
    const composer = pool();
    const job = makeJob('ann@dest.test', { dkim: key.dkim, message: { text: 'composed in a worker', html: '<p>composed in a worker</p>' } });
    const result = await processJob(job, deps(composer));
    expect(result).toMatchObject({ outcome: 'sent', smtp_code: 250 });
    expect(await arrived(job.message.message_id)).toEqual({ copies: 1, dkim: [['acme.test', 'pass']] });
    // It ran in a thread of its own, not this one.
    expect(composer.stats()).toMatchObject({ started: 1, lost: 0 });
    if (process.platform === 'linux') {
      expect(composer.threadIds()).toHaveLength(1);
      expect(composer.threadIds()[0]).not.toBe(process.pid);
    }
  });

  test('an address that is not one mailbox is refused in the worker as on the main thread: failed, nothing sent', async () => {
    const job = makeJob('ann@dest.test', { dkim: key.dkim, message: { from: 'ceo@bank.example, Foo <news@acme.test>' } });
    const result = await processJob(job, deps(pool()));
    expect(result).toMatchObject({ outcome: 'failed', smtp_code: null });
    expect(result.reply).toMatch(/^from must be exactly one mailbox/);
    expect(receiver.messages.some((m) => m.bytes.includes(job.message.message_id))).toBe(false);
  });

  test('a worker that dies is replaced and every message it held is composed again and delivered once', async () => {
    const composer = pool({ workerUrl: crashingWorker });
    const crashing = makeJob('bob@dest.test', { dkim: key.dkim, message: { subject: `crash-once:${join(scratch, 'marker')}` } });
    // Handed to the same worker as the crashing one, before and after it.
    const others = [0, 1, 2, 3].map((i) => makeJob(`carol${i}@dest.test`, { dkim: key.dkim }));
    const jobs = [others[0]!, others[1]!, crashing, others[2]!, others[3]!];
    const results = await Promise.all(jobs.map((job) => processJob(job, deps(composer))));
    expect(results.map((r) => r.outcome)).toEqual(['sent', 'sent', 'sent', 'sent', 'sent']);
    for (const job of jobs) expect(await arrived(job.message.message_id)).toEqual({ copies: 1, dkim: [['acme.test', 'pass']] });
    expect(composer.stats()).toMatchObject({ started: 2, lost: 1 });
    expect(composer.stats().retried).toBeGreaterThanOrEqual(1);
    expect(warnings.map((w) => w.message)).toContain('compose worker lost; its messages are composed again by another');
  });

  test('a message that takes down every worker is given up after maxAttempts (deferred, naming it) and the next is composed', async () => {
    const composer = pool({ workerUrl: crashingWorker, maxAttempts: 2 });
    const poison = makeJob('dan@dest.test', { dkim: key.dkim, message: { subject: 'crash-always' } });
    const result = await processJob(poison, deps(composer));
    expect(result).toMatchObject({ outcome: 'deferred', smtp_code: null });
    expect(result.reply).toMatch(/^relay node could not compose the message: the compose worker stopped \(exit code 70\); given up after 2 attempts/);
    expect(receiver.messages.some((m) => m.bytes.includes(poison.message.message_id))).toBe(false);
    const next = makeJob('erin@dest.test', { dkim: key.dkim });
    expect(await processJob(next, deps(composer))).toMatchObject({ outcome: 'sent' });
    expect(await arrived(next.message.message_id)).toEqual({ copies: 1, dkim: [['acme.test', 'pass']] });
    expect(composer.stats()).toMatchObject({ started: 3, lost: 2 });
  });

  test('sized to the cores less one, at least one; a set number is taken as it is', () => {
    expect(composeThreadsFor(0, 8)).toBe(7);
    expect(composeThreadsFor(0, 2)).toBe(1);
    expect(composeThreadsFor(0, 1)).toBe(1);
    expect(composeThreadsFor(3, 2)).toBe(3);
  });
});
