// Issue 13, item 1: a tenant's recipient domain whose MX (or A/AAAA fallback)
// points into private space makes no connection there. Real DNS (the test DNS
// server) and real SMTP receivers listening on the very loopback addresses
// the records name: with outbound.allow_private_mx at its default they see
// nothing; with it on they get the mail (so the refusal is the rule, not a
// network failure). Also: at most 10 MX hosts, looked up at once, and
// planning cut off by the lease's end.
import { createSocket, type Socket } from 'node:dgram';
import type { DNSResolver } from 'mailauth';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../test-support/dns-server.js';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import type { Log } from '../log.js';
import { processJob, type ProcessJobDeps } from './process-job.js';
import { MAX_MX_HOSTS } from './mx-lookup.js';
import { planDelivery, type RouteSettings } from './route.js';
import { makeJob } from '../../test-support/jobs.js';
import { startReceiver, type Receiver } from '../../test-support/receiver.js';

const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
const log: Log = {
  info: (message, fields) => lines.push({ level: 'info', message, fields }),
  warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
  error: (message, fields) => lines.push({ level: 'error', message, fields }),
};

let dns: TestDnsServer;
/** Receivers on the loopback addresses the private records name, one port for both. */
let v4: Receiver;
let v6: Receiver;
/** A UDP "name server" that takes questions and never answers. */
let deaf: Socket;
let deps: ProcessJobDeps;
/** The defaults: outbound.allow_private_mx off. */
let settings: RouteSettings;

const RULE = 'relay nodes deliver only to public addresses unless outbound.allow_private_mx is set';

beforeAll(async () => {
  v4 = await startReceiver({ host: '127.0.0.1' });
  v6 = await startReceiver({ host: '::1', port: v4.port });
  deaf = createSocket('udp4');
  await new Promise<void>((resolve) => deaf.bind(0, '127.0.0.1', resolve));
  const twelve = Array.from({ length: 12 }, (_, i) => ({ preference: 10 + i, exchange: `mx${i}.many.test` }));
  dns = await startDnsServer({
    'mx.inside.test': { A: ['127.0.0.1'] },
    'private-mx.test': { MX: [{ preference: 10, exchange: 'mx.inside.test' }] },
    'literal-mx.test': { MX: [{ preference: 10, exchange: '10.9.8.7' }] },
    'a10.test': { A: ['10.1.2.3'] },
    'a127.test': { A: ['127.0.0.1'] },
    'a169.test': { A: ['169.254.169.254'] },
    'aaaa-loopback.test': { AAAA: ['::1'] },
    'aaaa-ula.test': { AAAA: ['fc00::25'] },
    'aaaa-mapped.test': { AAAA: ['::ffff:127.0.0.1'] },
    'mx.outside.test': { A: ['93.184.216.34'] },
    'mx.both.test': { A: ['93.184.216.35', '192.168.1.25'] },
    'mixed.test': { MX: [{ preference: 5, exchange: 'mx.inside.test' }, { preference: 10, exchange: 'mx.outside.test' }, { preference: 20, exchange: 'mx.both.test' }] },
    'many.test': { MX: twelve },
    ...Object.fromEntries(twelve.map((r, i) => [r.exchange, { A: [`93.184.216.${100 + i}`] }])),
    'slow.test': { MX: [{ preference: 10, exchange: 'mx.inside.test' }] },
  });
  settings = { captureDir: '', smarthost: '', mxPort: v4.port, requireTls: false };
  deps = {
    settings,
    resolve: createDnsResolver([dns.address], { cache: false }),
    hostName: 'relay.acme.test',
    log,
    timeouts: { connectionMs: 2000, greetingMs: 2000, socketMs: 5000 },
  };
});

afterAll(async () => {
  await v4?.close();
  await v6?.close();
  deaf?.close();
  await dns?.close();
});

const connections = () => v4.connections + v6.connections;

describe('outbound.allow_private_mx off (the default)', () => {
  test('an MX host on loopback: failed for good, naming the rule; the receiver there sees no connection', async () => {
    const before = connections();
    const job = makeJob('ann@private-mx.test');
    const result = await processJob(job, deps);
    expect(result).toMatchObject({ outcome: 'failed', smtp_code: null, server: null });
    expect(result.reply).toBe(`recipient domain private-mx.test has no public mail host: mx.inside.test is 127.0.0.1 (loopback); ${RULE}`);
    expect(connections()).toBe(before);
    expect(v4.messages.some((m) => m.bytes.includes(job.message.message_id))).toBe(false);
  });

  test('an MX written as a private IP literal is refused too', async () => {
    const result = await processJob(makeJob('ann@literal-mx.test'), deps);
    expect(result).toMatchObject({ outcome: 'failed', server: null, reply: `recipient domain literal-mx.test has no public mail host: 10.9.8.7 is 10.9.8.7 (private); ${RULE}` });
  });

  test.each([
    ['a10.test', '10.1.2.3', 'private'],
    ['a127.test', '127.0.0.1', 'loopback'],
    ['a169.test', '169.254.169.254', 'link-local'],
    ['aaaa-loopback.test', '::1', 'loopback'],
    ['aaaa-ula.test', 'fc00::25', 'unique local'],
    ['aaaa-mapped.test', '::ffff:127.0.0.1', 'ipv4-mapped'],
  ])('no MX, and the A/AAAA fallback of %s is %s: failed naming the rule, nothing connects', async (domain, address, range) => {
    const before = connections();
    const result = await processJob(makeJob(`ann@${domain}`), deps);
    expect(result).toMatchObject({ outcome: 'failed', smtp_code: null, server: null });
    expect(result.reply).toBe(`recipient domain ${domain} has no public mail host: ${domain} is ${address} (${range}); ${RULE}`);
    expect(connections()).toBe(before);
  });

  test('private addresses are dropped, public ones kept in preference order, the dropped ones logged', async () => {
    const plan = await planDelivery(makeJob('ann@mixed.test'), settings, deps.resolve);
    expect(plan).toMatchObject({
      kind: 'smtp', via: 'mx',
      targets: [
        { host: 'mx.outside.test', address: '93.184.216.34', port: v4.port },
        { host: 'mx.both.test', address: '93.184.216.35', port: v4.port },
      ],
      dropped: [
        { host: 'mx.inside.test', address: '127.0.0.1', range: 'loopback' },
        { host: 'mx.both.test', address: '192.168.1.25', range: 'private' },
      ],
    });
  });

  test('at most the 10 most preferred MX hosts are looked up, all at once', async () => {
    const asked: string[] = [];
    let inFlight = 0;
    let most = 0;
    const real = deps.resolve;
    const watching: DNSResolver = async (name, type) => {
      asked.push(`${name} ${type}`);
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        return await real(name, type);
      } finally {
        inFlight--;
      }
    };
    const plan = await planDelivery(makeJob('ann@many.test'), settings, watching);
    const hosts = [...new Set(asked.filter((q) => !q.endsWith(' MX')).map((q) => q.split(' ')[0]))];
    expect(hosts).toHaveLength(MAX_MX_HOSTS);
    expect(new Set(hosts)).toEqual(new Set(Array.from({ length: MAX_MX_HOSTS }, (_, i) => `mx${i}.many.test`)));
    // Every host's A and AAAA were in flight together, not one after the other.
    expect(most).toBe(2 * MAX_MX_HOSTS);
    expect(plan).toMatchObject({ kind: 'smtp', targets: expect.arrayContaining([{ host: 'mx0.many.test', address: '93.184.216.100', port: v4.port }]) });
    expect(plan.kind === 'smtp' && plan.targets.map((t) => t.host)).toEqual(Array.from({ length: MAX_MX_HOSTS }, (_, i) => `mx${i}.many.test`));
  });
});

describe('outbound.allow_private_mx on (closed networks)', () => {
  test('the same loopback MX takes the message', async () => {
    const job = makeJob('ann@private-mx.test');
    const result = await processJob(job, { ...deps, settings: { ...settings, allowPrivateMx: true } });
    expect(result).toMatchObject({ outcome: 'sent', smtp_code: 250, server: `mx.inside.test:${v4.port}` });
    expect(v4.messages.some((m) => m.bytes.includes(job.message.message_id))).toBe(true);
  });

  test('an AAAA fallback on ::1 takes the message, connected at the checked address', async () => {
    const job = makeJob('ann@aaaa-loopback.test');
    const result = await processJob(job, { ...deps, settings: { ...settings, allowPrivateMx: true } });
    expect(result).toMatchObject({ outcome: 'sent', server: `aaaa-loopback.test:${v4.port}` });
    expect(v6.messages.find((m) => m.bytes.includes(job.message.message_id))?.localAddress).toBe('::1');
  });
});

describe('planning under the lease', () => {
  const deafResolver = () => createDnsResolver([`127.0.0.1:${(deaf.address()).port}`], { cache: false, timeoutMs: 60_000, tries: 1 });

  test('a name server that never answers: planning ends with the lease, deferred, nothing connects', async () => {
    const before = connections();
    // Two seconds of lease: the node stops a fifth of it before the end.
    const job = makeJob('ann@slow.test', { lease_until: new Date(Date.now() + 2000).toISOString() });
    const result = await processJob(job, { ...deps, settings: { ...settings, allowPrivateMx: true }, resolve: deafResolver() });
    expect(result).toMatchObject({ outcome: 'deferred', smtp_code: null, server: null });
    expect(result.reply).toBe('MX lookup for slow.test cut off: the lease ended or the relay node is stopping; tried again later');
    expect(connections()).toBe(before);
  });

  test('planning has one bound of its own besides the lease', async () => {
    const plan = await planDelivery(makeJob('ann@slow.test'), settings, deafResolver(), { boundMs: 300 });
    expect(plan).toEqual({ kind: 'refused', outcome: 'deferred', reply: 'MX lookup for slow.test cut off: it took longer than 300 ms; tried again later' });
  });

  test('a job whose lease has already ended is not delivered', async () => {
    const before = connections();
    const job = makeJob('ann@private-mx.test', { lease_until: new Date(Date.now() - 1000).toISOString() });
    const result = await processJob(job, { ...deps, settings: { ...settings, allowPrivateMx: true } });
    expect(result).toMatchObject({ outcome: 'deferred', smtp_code: null, server: null });
    expect(result.reply).toMatch(/lease ended/);
    expect(connections()).toBe(before);
  });
});
