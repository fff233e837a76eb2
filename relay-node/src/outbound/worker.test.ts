// The outbound loop against a stand-in for the edge's two outbound routes (an
// in-process HTTP server, spoken to through the node's real edge client) and
// real SMTP receivers on loopback.
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import { createEdgeClient } from '../edge/client.js';
import { NodeRevokedError } from '../edge/errors.js';
import type { Log } from '../log.js';
import { processJob, type ProcessJobDeps } from './process-job.js';
import { makeJob } from '../../test-support/jobs.js';
import { startFakeEdge, type FakeEdge } from '../../test-support/fake-edge.js';
import { startReceiver, startSilentServer, type Receiver } from '../../test-support/receiver.js';
import { createOutboundWorker, type OutboundWorker, type OutboundWorkerOptions } from './worker.js';
import type { OutboundJob } from '@edgemail/shared';

interface Line { level: string; message: string; fields?: Record<string, unknown> }

let edge: FakeEdge;
let lines: Line[] = [];
const running: OutboundWorker[] = [];
const closers: { close(): Promise<void> }[] = [];

const log: Log = {
  info: (message, fields) => lines.push({ level: 'info', message, fields }),
  warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
  error: (message, fields) => lines.push({ level: 'error', message, fields }),
};

beforeAll(async () => {
  edge = await startFakeEdge();
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
  await Promise.all(closers.splice(0).map((c) => c.close()));
  edge.queue.length = 0;
  edge.claims.length = 0;
  edge.reports.length = 0;
  edge.results.length = 0;
  edge.stale.clear();
  edge.failClaims.length = 0;
  edge.failReports.length = 0;
  lines = [];
});

afterAll(async () => {
  await edge?.close();
});

/** Every MX-routed job goes to `port` on 127.0.0.1 (the smarthost setting): no DNS needed here. */
function deliverDeps(port: number, timeouts?: ProcessJobDeps['timeouts']): ProcessJobDeps {
  return {
    settings: { captureDir: '', smarthost: `127.0.0.1:${port}`, mxPort: 25, requireTls: false },
    resolve: createDnsResolver(['127.0.0.1:9'], { cache: false, timeoutMs: 100, tries: 1 }),
    hostName: 'relay.acme.test',
    log,
    timeouts: timeouts ?? { connectionMs: 2000, greetingMs: 2000, socketMs: 5000 },
  };
}

function startWorker(deps: ProcessJobDeps, extra: Partial<OutboundWorkerOptions> = {}): { worker: OutboundWorker; fatal: Error[] } {
  const client = createEdgeClient({ url: edge.url, token: edge.token, timeoutMs: 2000 });
  const fatal: Error[] = [];
  const worker = createOutboundWorker({
    claim: (max, signal) => client.claimOutbound(max, signal),
    report: (results, signal) => client.reportOutbound(results, signal),
    deliver: (job, signal) => processJob(job, deps, signal),
    log,
    onFatal: (err) => fatal.push(err),
    concurrency: 4,
    idlePollMs: 50,
    backoff: { initialMs: 50, maxMs: 200 },
    ...extra,
  });
  running.push(worker);
  worker.start();
  return { worker, fatal };
}

async function receiver(options: Parameters<typeof startReceiver>[0] = {}): Promise<Receiver> {
  const r = await startReceiver(options);
  closers.push(r);
  return r;
}

const until = async (condition: () => boolean, timeoutMs = 5000) => {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

test('claims, delivers and reports every job', async () => {
  const rx = await receiver();
  const jobs = Array.from({ length: 6 }, (_, i) => makeJob(`user${i}@dest.test`));
  edge.queue.push(...jobs);
  startWorker(deliverDeps(rx.port));
  const results = await edge.waitForResults(6);
  expect(new Set(results.map((r) => r.email_id))).toEqual(new Set(jobs.map((j) => j.email_id)));
  for (const r of results) expect(r).toMatchObject({ attempt: 1, outcome: 'sent', smtp_code: 250, server: `127.0.0.1:${rx.port}` });
  expect(rx.messages.map((m) => m.rcptTo[0]).sort()).toEqual(jobs.map((j) => j.envelope.to).sort());
  // Each recipient delivered once.
  expect(rx.messages).toHaveLength(6);
});

test('a job of the claim it cannot read (a newer edge\'s DKIM algorithm) is reported deferred naming the field, never delivered; the others are; one without an id is left to its lease', async () => {
  const rx = await receiver();
  const good = [makeJob('g1@dest.test'), makeJob('g2@dest.test')];
  const newer = { ...makeJob('odd@dest.test'), dkim: { domain: 'acme.test', selector: 's1', algorithm: 'rsa-pss', private_key_pem: '-----BEGIN PRIVATE KEY-----' } } as unknown as OutboundJob;
  const idless = { ...makeJob('lost@dest.test'), email_id: 'not-a-uuid' };
  edge.queue.push(good[0]!, newer, idless, good[1]!);
  startWorker(deliverDeps(rx.port));
  const results = await edge.waitForResults(3);
  expect(results.find((r) => r.email_id === newer.email_id)).toMatchObject({
    outcome: 'deferred', smtp_code: null, server: null, duration_ms: 0,
    reply: 'not delivered: this relay node (relay contract 1) cannot read the job (dkim.algorithm: Invalid option: expected one of "rsa"|"ed25519"); upgrade the node',
  });
  expect(results.filter((r) => r.outcome === 'sent').map((r) => r.email_id).sort()).toEqual(good.map((j) => j.email_id).sort());
  expect(rx.messages.map((m) => m.rcptTo[0]).sort()).toEqual(['g1@dest.test', 'g2@dest.test']);
  expect(lines.find((l) => l.level === 'error')?.message).toMatch(/^outbound job unreadable and without an id/);
});

test('never more deliveries in flight than the concurrency, and never a claim for more than that', async () => {
  let current = 0;
  let highest = 0;
  const rx = await receiver({
    beforeDataReply: async () => {
      highest = Math.max(highest, ++current);
      await new Promise((r) => setTimeout(r, 120));
      current--;
    },
  });
  edge.queue.push(...Array.from({ length: 10 }, (_, i) => makeJob(`c${i}@dest.test`)));
  startWorker(deliverDeps(rx.port), { concurrency: 3 });
  const results = await edge.waitForResults(10);
  expect(results.every((r) => r.outcome === 'sent')).toBe(true);
  expect(highest).toBe(3);
  expect(Math.max(...edge.claims)).toBeLessThanOrEqual(3);
  expect(edge.claims[0]).toBe(3);
});

test('with nothing due it polls at the idle interval, and picks up a job queued later', async () => {
  const rx = await receiver();
  startWorker(deliverDeps(rx.port), { idlePollMs: 100 });
  await new Promise((r) => setTimeout(r, 550));
  expect(edge.claims.length).toBeGreaterThanOrEqual(3);
  expect(edge.claims.length).toBeLessThanOrEqual(8);
  const job = makeJob('late@dest.test');
  edge.queue.push(job);
  const [result] = await edge.waitForResults(1, 2000);
  expect(result).toMatchObject({ email_id: job.email_id, outcome: 'sent' });
});

test('4xx and 5xx results are reported as deferred and failed', async () => {
  const busy = await receiver({ rcptReply: { code: 451, text: '4.7.1 greylisted, come back later' } });
  const job = makeJob('grey@dest.test');
  edge.queue.push(job);
  startWorker(deliverDeps(busy.port));
  const [result] = await edge.waitForResults(1);
  expect(result).toMatchObject({ email_id: job.email_id, outcome: 'deferred', smtp_code: 451, reply: '451 4.7.1 greylisted, come back later' });
  expect(lines.some((l) => l.level === 'warn' && l.message === 'outbound message deferred' && l.fields?.email_id === job.email_id)).toBe(true);
});

describe('stop()', () => {
  test('waits for deliveries in flight, reports them, and claims nothing more', async () => {
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let inData = 0;
    const rx = await receiver({
      beforeDataReply: async () => {
        inData++;
        await held;
      },
    });
    edge.queue.push(makeJob('s1@dest.test'), makeJob('s2@dest.test'));
    const { worker } = startWorker(deliverDeps(rx.port));
    await until(() => inData === 2);
    const claimsBefore = edge.claims.length;
    let stopped = false;
    const stopping = worker.stop().then(() => {
      stopped = true;
    });
    await new Promise((r) => setTimeout(r, 150));
    expect(stopped).toBe(false);
    expect(edge.results).toHaveLength(0);
    release();
    await stopping;
    expect(edge.results.map((r) => r.outcome)).toEqual(['sent', 'sent']);
    expect(edge.claims.length).toBe(claimsBefore);
    edge.queue.push(makeJob('after@dest.test'));
    await new Promise((r) => setTimeout(r, 150));
    expect(edge.claims.length).toBe(claimsBefore);
  });

  test('past its bound, interrupts the deliveries and reports them deferred', async () => {
    const mute = await startSilentServer();
    closers.push(mute);
    const job = makeJob('mute@dest.test');
    edge.queue.push(job);
    const { worker } = startWorker(deliverDeps(mute.port, { connectionMs: 10_000, greetingMs: 10_000, socketMs: 10_000 }), { stopTimeoutMs: 200 });
    await until(() => mute.sockets.length === 1);
    const t0 = Date.now();
    await worker.stop();
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(edge.results).toEqual([expect.objectContaining({ email_id: job.email_id, outcome: 'deferred', smtp_code: null, reply: 'delivery interrupted: the relay node is stopping' })]);
  });
});

describe('edge trouble', () => {
  test('a 503 on claim: waits its backoff and carries on, one warning', async () => {
    const rx = await receiver();
    edge.failClaims.push({ status: 503, body: { error: 'down' } }, { status: 503, body: { error: 'down' } });
    edge.queue.push(makeJob('b@dest.test'));
    startWorker(deliverDeps(rx.port));
    const [result] = await edge.waitForResults(1);
    expect(result!.outcome).toBe('sent');
    expect(edge.claims.length).toBeGreaterThanOrEqual(3);
    expect(lines.filter((l) => l.message === 'outbound claim failed; waiting')).toHaveLength(1);
    expect(lines.some((l) => l.message === 'the edge answers outbound claims again')).toBe(true);
  });

  test('resume() (a heartbeat got through) ends a long claim backoff at once', async () => {
    const rx = await receiver();
    edge.failClaims.push({ status: 503, body: { error: 'down' } });
    const { worker } = startWorker(deliverDeps(rx.port), { backoff: { initialMs: 60_000, maxMs: 60_000 } });
    await until(() => edge.claims.length === 1);
    edge.queue.push(makeJob('resumed@dest.test'));
    await new Promise((r) => setTimeout(r, 100));
    expect(edge.claims).toHaveLength(1);
    worker.resume();
    const [result] = await edge.waitForResults(1, 2000);
    expect(result!.outcome).toBe('sent');
  });

  test('a 503 on results: the results are kept and reported on the next try', async () => {
    const rx = await receiver();
    edge.failReports.push({ status: 503, body: { error: 'down' } });
    const job = makeJob('r@dest.test');
    edge.queue.push(job);
    startWorker(deliverDeps(rx.port));
    const [result] = await edge.waitForResults(1);
    expect(result).toMatchObject({ email_id: job.email_id, outcome: 'sent' });
    expect(rx.messages).toHaveLength(1);
  });

  test('a result the edge calls stale is logged and dropped', async () => {
    const rx = await receiver();
    const job = makeJob('stale@dest.test');
    edge.stale.add(job.email_id);
    edge.queue.push(job);
    const { worker } = startWorker(deliverDeps(rx.port));
    await edge.waitForResults(1);
    await until(() => lines.some((l) => l.message.includes('stale') && l.fields?.email_id === job.email_id));
    await worker.stop();
    expect(edge.reports).toHaveLength(1);
    expect(worker.unreported).toBe(0);
  });

  test('a revoked node: told once, no more claims', async () => {
    edge.failClaims.push({ status: 401, body: { error: 'relay node revoked' } });
    const rx = await receiver();
    const { fatal } = startWorker(deliverDeps(rx.port));
    await until(() => fatal.length === 1);
    expect(fatal[0]).toBeInstanceOf(NodeRevokedError);
    const claims = edge.claims.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(edge.claims.length).toBe(claims);
  });
});
