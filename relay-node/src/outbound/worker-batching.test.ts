// Fewer, fuller edge calls. Claiming ahead: while every delivery slot is busy,
// the next jobs are already claimed (as many as the slots), so slots never
// wait for a claim's round trip; still never more deliveries at once than the
// slots, never a claim for more, and a stop delivers (or, past its bound,
// reports deferred) what was claimed ahead. Gathered reports: while
// deliveries run, results wait for a report's worth; the last of a burst goes
// at once. Against the stand-in edge and a real SMTP receiver on loopback.
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import { createEdgeClient } from '../edge/client.js';
import type { Log } from '../log.js';
import { processJob, type ProcessJobDeps } from './process-job.js';
import { makeJob } from '../../test-support/jobs.js';
import { startFakeEdge, type FakeEdge } from '../../test-support/fake-edge.js';
import { startReceiver, type Receiver } from '../../test-support/receiver.js';
import { createOutboundWorker, type OutboundWorker, type OutboundWorkerOptions } from './worker.js';

const silent: Log = { info() {}, warn() {}, error() {} };
let edge: FakeEdge;
let rx: Receiver;
const running: OutboundWorker[] = [];
/** Holds the reply to DATA while set; every held delivery is counted in `inData`. */
let hold: Promise<void> | null = null;
let inData = 0;
let highest = 0;

beforeAll(async () => {
  edge = await startFakeEdge();
  rx = await startReceiver({
    beforeDataReply: async () => {
      highest = Math.max(highest, ++inData);
      await hold;
      inData--;
    },
  });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((w) => w.stop()));
  edge.queue.length = 0;
  edge.claims.length = 0;
  edge.reports.length = 0;
  edge.results.length = 0;
  hold = null;
  inData = 0;
  highest = 0;
});

afterAll(async () => {
  await rx?.close();
  await edge?.close();
});

function startWorker(extra: Partial<OutboundWorkerOptions> = {}): OutboundWorker {
  const client = createEdgeClient({ url: edge.url, token: edge.token, timeoutMs: 2000 });
  const deps: ProcessJobDeps = {
    settings: { captureDir: '', smarthost: `127.0.0.1:${rx.port}`, mxPort: 25, requireTls: false },
    resolve: createDnsResolver(['127.0.0.1:9'], { cache: false, timeoutMs: 100, tries: 1 }),
    hostName: 'relay.acme.test',
    log: silent,
    timeouts: { connectionMs: 2000, greetingMs: 2000, socketMs: 10_000 },
  };
  const worker = createOutboundWorker({
    claim: (max, signal) => client.claimOutbound(max, signal),
    report: (results, signal) => client.reportOutbound(results, signal),
    deliver: (job, signal) => processJob(job, deps, signal),
    log: silent,
    onFatal: () => {},
    concurrency: 4,
    idlePollMs: 50,
    ...extra,
  });
  running.push(worker);
  worker.start();
  return worker;
}

const until = async (condition: () => boolean, timeoutMs = 5000) => {
  const end = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
};

/** Holds every DATA reply until the returned function is called. */
function holdData(): () => void {
  let release!: () => void;
  hold = new Promise<void>((r) => { release = r; });
  return () => { hold = null; release(); };
}

test('with every slot busy, as many jobs again are claimed and wait; each job is delivered once, never more than the slots at once', async () => {
  const release = holdData();
  const jobs = Array.from({ length: 12 }, (_, i) => makeJob(`ahead${i}@dest.test`));
  edge.queue.push(...jobs);
  const worker = startWorker();
  await until(() => inData === 4 && edge.claims.length === 2);
  // The first claim fills the slots; the second (as many again) is claimed while they are all busy.
  expect(edge.claims).toEqual([4, 4]);
  expect(edge.queue).toHaveLength(4);
  expect(worker.inFlight).toBe(4);
  await new Promise((r) => setTimeout(r, 150));
  // Nothing more while the slots stay busy.
  expect(edge.claims).toEqual([4, 4]);
  release();
  const results = await edge.waitForResults(12);
  expect(results.every((r) => r.outcome === 'sent')).toBe(true);
  expect(new Set(results.map((r) => r.email_id))).toEqual(new Set(jobs.map((j) => j.email_id)));
  expect(rx.messages.filter((m) => m.rcptTo[0]!.startsWith('ahead'))).toHaveLength(12);
  expect(highest).toBe(4);
  expect(Math.max(...edge.claims)).toBeLessThanOrEqual(4);
});

test('stop() delivers the jobs claimed ahead too, and claims nothing more', async () => {
  const release = holdData();
  const jobs = Array.from({ length: 6 }, (_, i) => makeJob(`stopping${i}@dest.test`));
  edge.queue.push(...jobs);
  // The second claim brings fewer than asked (the queue ran dry): the node asks again only after idlePollMs.
  const worker = startWorker({ idlePollMs: 60_000 });
  await until(() => inData === 4 && edge.claims.length === 2);
  const stopping = worker.stop();
  await new Promise((r) => setTimeout(r, 100));
  release();
  await stopping;
  expect(edge.results.map((r) => r.outcome)).toEqual(Array(6).fill('sent'));
  expect(edge.claims).toEqual([4, 4]);
});

test('stop() past its bound: the deliveries in flight and the jobs claimed ahead are reported deferred, each once', async () => {
  holdData();
  const jobs = Array.from({ length: 6 }, (_, i) => makeJob(`cut${i}@dest.test`));
  edge.queue.push(...jobs);
  const worker = startWorker({ stopTimeoutMs: 200, idlePollMs: 60_000 });
  await until(() => inData === 4 && edge.claims.length === 2);
  await worker.stop();
  expect(edge.results).toHaveLength(6);
  expect(new Set(edge.results.map((r) => r.email_id))).toEqual(new Set(jobs.map((j) => j.email_id)));
  for (const r of edge.results) expect(r).toMatchObject({ outcome: 'deferred', smtp_code: null, reply: 'delivery interrupted: the relay node is stopping' });
});

test('while deliveries run, results wait for a report\'s worth (the slots\' number); the rest of a burst goes once nothing is held', async () => {
  const jobs = Array.from({ length: 10 }, (_, i) => makeJob(`gathered${i}@dest.test`));
  edge.queue.push(...jobs);
  // A gathering time far beyond the test: only a full report, or the end of the burst, sends one.
  const worker = startWorker({ reportGatherMs: 60_000 });
  const results = await edge.waitForResults(10);
  expect(new Set(results.map((r) => r.email_id))).toEqual(new Set(jobs.map((j) => j.email_id)));
  expect(results.every((r) => r.outcome === 'sent')).toBe(true);
  // Every report but the last carries at least 4 (the concurrency); the last one whatever was left.
  expect(edge.reports.slice(0, -1).every((r) => r.length >= 4)).toBe(true);
  expect(edge.reports.length).toBeLessThanOrEqual(3);
  expect(worker.unreported).toBe(0);
});

test('a lone delivery is reported at once, not after the gathering time', async () => {
  const job = makeJob('alone@dest.test');
  edge.queue.push(job);
  startWorker({ reportGatherMs: 60_000 });
  const [result] = await edge.waitForResults(1, 3000);
  expect(result).toMatchObject({ email_id: job.email_id, outcome: 'sent' });
});
