// How an SMTP conversation ends, as a Result: real servers on loopback that
// answer 4xx, 5xx, nothing at all, offer STARTTLS or not, demand AUTH.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../test-support/dns-server.js';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import type { Log } from '../log.js';
import { processJob, type ProcessJobDeps } from './process-job.js';
import { TransportPool } from './transport-pool.js';
import { makeJob } from '../../test-support/jobs.js';
import { startReceiver, startSilentServer, testCertificate, type Receiver } from '../../test-support/receiver.js';

const silent: Log = { info() {}, warn() {}, error() {} };
let dns: TestDnsServer;
const started: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  dns = await startDnsServer({ 'mx.dest.test': { A: ['127.0.0.1'] } });
});

afterAll(async () => {
  await Promise.all(started.map((s) => s.close()));
  await dns?.close();
});

async function receiver(options: Parameters<typeof startReceiver>[0] = {}): Promise<Receiver> {
  const r = await startReceiver(options);
  started.push(r);
  return r;
}

/** Deps whose MX for every domain is `mx.dest.test` (127.0.0.1) on `port`. */
function mxDeps(port: number, extra: Partial<ProcessJobDeps['settings']> = {}, timeouts?: ProcessJobDeps['timeouts']): ProcessJobDeps {
  return {
    // The project servers and MX hosts of these tests listen on loopback.
    settings: { captureDir: '', smarthost: '', mxPort: port, requireTls: false, allowPrivateProjectServers: true, allowPrivateMx: true, ...extra },
    resolve: createDnsResolver([dns.address], { cache: false }),
    hostName: 'relay.acme.test',
    log: silent,
    timeouts: timeouts ?? { connectionMs: 2000, greetingMs: 2000, socketMs: 5000 },
  };
}

let domainCounter = 0;
/** A job to a fresh domain whose only MX is mx.dest.test. */
function mxJob(): ReturnType<typeof makeJob> {
  const domain = `d${++domainCounter}.dest.test`;
  dns.set(domain, { MX: [{ preference: 10, exchange: 'mx.dest.test' }] });
  return makeJob(`ann@${domain}`);
}

describe('replies', () => {
  test('2xx: sent, with the server\'s reply, code and timings', async () => {
    const rx = await receiver({ okText: () => '2.0.0 Ok: queued as ABC123' });
    const job = mxJob();
    const before = Date.now();
    const result = await processJob(job, mxDeps(rx.port));
    expect(result).toMatchObject({
      email_id: job.email_id, attempt: 1, outcome: 'sent', smtp_code: 250,
      reply: '250 2.0.0 Ok: queued as ABC123', server: `mx.dest.test:${rx.port}`,
    });
    expect(Date.parse(result.started_at)).toBeGreaterThanOrEqual(before - 1);
    expect(result.duration_ms).toBeGreaterThanOrEqual(0);
    expect(rx.messages[0]).toMatchObject({ mailFrom: 'news@acme.test', rcptTo: [job.envelope.to], helo: 'relay.acme.test' });
  });

  test('4xx to RCPT: deferred with the code and the full reply', async () => {
    const rx = await receiver({ rcptReply: { code: 451, text: '4.2.0 mailbox busy, try again later' } });
    const result = await processJob(mxJob(), mxDeps(rx.port));
    expect(result).toMatchObject({ outcome: 'deferred', smtp_code: 451, reply: '451 4.2.0 mailbox busy, try again later', server: `mx.dest.test:${rx.port}` });
  });

  test('5xx to RCPT: failed with the server\'s reply', async () => {
    const rx = await receiver({ rcptReply: { code: 550, text: '5.1.1 <ann>: no such user here' } });
    const result = await processJob(mxJob(), mxDeps(rx.port));
    expect(result).toMatchObject({ outcome: 'failed', smtp_code: 550, reply: '550 5.1.1 <ann>: no such user here' });
  });

  test('5xx after DATA: failed; 4xx after DATA: deferred', async () => {
    const rejecting = await receiver({ dataReply: { code: 554, text: '5.7.1 message content rejected' } });
    expect(await processJob(mxJob(), mxDeps(rejecting.port))).toMatchObject({ outcome: 'failed', smtp_code: 554, reply: '554 5.7.1 message content rejected' });
    const greylisting = await receiver({ dataReply: { code: 452, text: '4.3.1 insufficient system storage' } });
    expect(await processJob(mxJob(), mxDeps(greylisting.port))).toMatchObject({ outcome: 'deferred', smtp_code: 452, reply: '452 4.3.1 insufficient system storage' });
  });

  test('a 5xx is not a reason to try the next MX', async () => {
    const rx = await receiver({ rcptReply: { code: 550, text: '5.1.1 no such user' } });
    const second = await receiver({ host: '127.0.0.3', port: rx.port });
    dns.set('mx3.dest.test', { A: ['127.0.0.3'] });
    const job = makeJob('ann@two-mx.dest.test');
    dns.set('two-mx.dest.test', { MX: [{ preference: 10, exchange: 'mx.dest.test' }, { preference: 20, exchange: 'mx3.dest.test' }] });
    const result = await processJob(job, mxDeps(rx.port));
    expect(result).toMatchObject({ outcome: 'failed', smtp_code: 550, server: `mx.dest.test:${rx.port}` });
    expect(second.connections).toBe(0);
  });
});

describe('no answer', () => {
  test('a server that never greets: deferred after the greeting timeout, no code', async () => {
    const mute = await startSilentServer();
    started.push(mute);
    const t0 = Date.now();
    const result = await processJob(mxJob(), mxDeps(mute.port, {}, { connectionMs: 2000, greetingMs: 300, socketMs: 2000 }));
    const took = Date.now() - t0;
    expect(result).toMatchObject({ outcome: 'deferred', smtp_code: null, server: `mx.dest.test:${mute.port}` });
    expect(result.reply).toMatch(/no answer from mx\.dest\.test within 300 ms/);
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(3000);
  });

  test('a server that goes quiet after the data: deferred after the idle timeout', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const rx = await receiver({ beforeDataReply: () => held });
    const result = await processJob(mxJob(), mxDeps(rx.port, {}, { connectionMs: 2000, greetingMs: 2000, socketMs: 400 }));
    release();
    expect(result).toMatchObject({ outcome: 'deferred', smtp_code: null });
    expect(result.reply).toMatch(/within 400 ms/);
  });
});

describe('TLS', () => {
  test('MX: STARTTLS used when offered, the certificate not verified (self-signed here)', async () => {
    const rx = await receiver();
    expect(await processJob(mxJob(), mxDeps(rx.port))).toMatchObject({ outcome: 'sent' });
    expect(rx.messages[0]!.secure).toBe(true);
  });

  test('MX without STARTTLS: sent in plain text by default', async () => {
    const rx = await receiver({ starttls: false });
    expect(await processJob(mxJob(), mxDeps(rx.port))).toMatchObject({ outcome: 'sent' });
    expect(rx.messages[0]!.secure).toBe(false);
  });

  test('outbound.require_tls and no STARTTLS: deferred, nothing sent', async () => {
    const rx = await receiver({ starttls: false });
    const result = await processJob(mxJob(), mxDeps(rx.port, { requireTls: true }));
    expect(result).toMatchObject({
      outcome: 'deferred', smtp_code: null, server: `mx.dest.test:${rx.port}`,
      reply: 'STARTTLS required by outbound.require_tls but not offered by mx.dest.test',
    });
    expect(rx.messages).toHaveLength(0);
  });

  test('outbound.require_tls and STARTTLS offered: sent over TLS', async () => {
    const rx = await receiver();
    expect(await processJob(mxJob(), mxDeps(rx.port, { requireTls: true }))).toMatchObject({ outcome: 'sent' });
    expect(rx.messages[0]!.secure).toBe(true);
  });
});

describe('route smtp (a project\'s or the pool\'s server)', () => {
  const credentials = { user: 'acme', pass: 's3cret' };
  const smtpJob = (port: number, security: 'starttls' | 'tls' | 'none', password = credentials.pass) =>
    makeJob('ann@example.org', { route: { kind: 'smtp', source: 'project', host: '127.0.0.1', port, security, username: credentials.user, password } });
  /** Trusts the receivers' self-signed certificate, as a private CA would be. */
  const trusting = (port: number): ProcessJobDeps => ({ ...mxDeps(port), extraCa: [testCertificate().cert] });

  test('starttls + AUTH: logged in over a verified TLS session', async () => {
    const rx = await receiver({ auth: credentials });
    const job = smtpJob(rx.port, 'starttls');
    const result = await processJob(job, trusting(rx.port));
    expect(result).toMatchObject({ outcome: 'sent', smtp_code: 250, server: `127.0.0.1:${rx.port}` });
    expect(rx.messages[0]).toMatchObject({ user: 'acme', secure: true, rcptTo: ['ann@example.org'] });
  });

  test('implicit tls + AUTH', async () => {
    const rx = await receiver({ auth: credentials, implicitTls: true });
    expect(await processJob(smtpJob(rx.port, 'tls'), trusting(rx.port))).toMatchObject({ outcome: 'sent' });
    expect(rx.messages[0]).toMatchObject({ user: 'acme', secure: true });
  });

  test('security none + AUTH: plain text, as configured', async () => {
    const rx = await receiver({ auth: credentials, starttls: false, insecureAuth: true });
    expect(await processJob(smtpJob(rx.port, 'none'), mxDeps(rx.port))).toMatchObject({ outcome: 'sent' });
    expect(rx.messages[0]).toMatchObject({ user: 'acme', secure: false });
  });

  test('a wrong password: failed with the server\'s 535', async () => {
    const rx = await receiver({ auth: credentials });
    const result = await processJob(smtpJob(rx.port, 'starttls', 'wrong'), trusting(rx.port));
    expect(result).toMatchObject({ outcome: 'failed', smtp_code: 535 });
    expect(result.reply).toMatch(/^535 5\.7\.8 authentication failed/);
    expect(rx.messages).toHaveLength(0);
  });

  test('a certificate that does not verify: deferred, the password never sent', async () => {
    const rx = await receiver({ auth: credentials });
    const result = await processJob(smtpJob(rx.port, 'starttls'), mxDeps(rx.port));
    expect(result).toMatchObject({ outcome: 'deferred', smtp_code: null });
    expect(result.reply).toMatch(/certificate/i);
    expect(rx.messages).toHaveLength(0);
  });

  test('starttls required by the server settings but not offered: deferred', async () => {
    const rx = await receiver({ starttls: false });
    const result = await processJob(smtpJob(rx.port, 'starttls'), trusting(rx.port));
    expect(result).toMatchObject({ outcome: 'deferred', reply: 'STARTTLS required by the SMTP server settings but not offered by 127.0.0.1' });
  });
});

describe('sessions reused per destination', () => {
  test('with a TransportPool, messages to one MX share sessions; each still gets its own reply', async () => {
    const rx = await receiver();
    const transports = new TransportPool({ connectionsPerDestination: 1 });
    try {
      const deps = { ...mxDeps(rx.port), transports };
      const jobs = [mxJob(), mxJob(), mxJob()];
      const results = [];
      for (const job of jobs) results.push(await processJob(job, deps));
      expect(results.map((r) => r.outcome)).toEqual(['sent', 'sent', 'sent']);
      expect(rx.messages.map((m) => m.rcptTo)).toEqual(jobs.map((j) => [j.envelope.to]));
      expect(rx.connections).toBe(1);
    } finally {
      await transports.stop();
    }
  });

  test('without one, every message opens a session of its own', async () => {
    const rx = await receiver();
    for (let i = 0; i < 2; i++) expect((await processJob(mxJob(), mxDeps(rx.port))).outcome).toBe('sent');
    expect(rx.connections).toBe(2);
  });

  test('a reply refused on a reused session is that message\'s reply only', async () => {
    const rx = await receiver({ rcptReply: (to) => (to.startsWith('bad@') ? { code: 550, text: '5.1.1 no such user' } : null) });
    const transports = new TransportPool({ connectionsPerDestination: 1 });
    try {
      const deps = { ...mxDeps(rx.port), transports };
      const good = await processJob(mxJob(), deps);
      const bad = mxJob();
      bad.envelope.to = bad.envelope.to.replace(/^[^@]+/, 'bad');
      const refused = await processJob(bad, deps);
      const after = await processJob(mxJob(), deps);
      expect([good.outcome, refused.outcome, after.outcome]).toEqual(['sent', 'failed', 'sent']);
      expect(refused.smtp_code).toBe(550);
      expect(rx.connections).toBe(1);
    } finally {
      await transports.stop();
    }
  });
});

describe('the lease bounds the whole attempt', () => {
  test('a server that holds the session past the lease\'s end (less its margin) is cut off and deferred', async () => {
    const silent = await startSilentServer();
    started.push(silent);
    const job = mxJob();
    // A fifth of what is left is kept before the lease's end: this leaves the attempt about 800 ms.
    job.lease_until = new Date(Date.now() + 1_000).toISOString();
    const result = await processJob(job, mxDeps(silent.port, {}, { connectionMs: 30_000, greetingMs: 60_000, socketMs: 120_000 }));
    expect(result).toMatchObject({ outcome: 'deferred', smtp_code: null });
    expect(result.reply).toMatch(/^delivery cut off \d+ ms before the lease's end \(/);
  });
});
