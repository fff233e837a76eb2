// MX routing against a real DNS server and real SMTP servers on loopback:
// preference order, the next MX when one refuses connections, the implicit MX,
// null MX and NXDOMAIN, and the smarthost.
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../test-support/dns-server.js';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import type { Log } from '../log.js';
import { processJob, type ProcessJobDeps } from './process-job.js';
import { parseHostPort, planDelivery } from './route.js';
import { makeJob } from '../../test-support/jobs.js';
import { startReceiver, type Receiver } from '../../test-support/receiver.js';

const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
const log: Log = {
  debug: (message, fields) => lines.push({ level: 'debug', message, fields }),
  info: (message, fields) => lines.push({ level: 'info', message, fields }),
  warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
  error: (message, fields) => lines.push({ level: 'error', message, fields }),
};

let dns: TestDnsServer;
/** Two "hosts" on one port: 127.0.0.1 and 127.0.0.3 (Linux answers all of 127/8 on loopback). */
let one: Receiver;
let three: Receiver;
let deps: ProcessJobDeps;

beforeAll(async () => {
  one = await startReceiver({ host: '127.0.0.1' });
  three = await startReceiver({ host: '127.0.0.3', port: one.port });
  dns = await startDnsServer({
    'one.dest.test': { A: ['127.0.0.1'] },
    'three.dest.test': { A: ['127.0.0.3'] },
    // 127.0.0.9: nobody listens there, so connecting is refused.
    'dead.dest.test': { A: ['127.0.0.9'] },
    'low-first.test': { MX: [{ preference: 20, exchange: 'three.dest.test' }, { preference: 10, exchange: 'one.dest.test' }] },
    'high-first.test': { MX: [{ preference: 10, exchange: 'three.dest.test' }, { preference: 20, exchange: 'one.dest.test' }] },
    'fallback.test': { MX: [{ preference: 5, exchange: 'dead.dest.test' }, { preference: 10, exchange: 'three.dest.test' }] },
    'all-dead.test': { MX: [{ preference: 5, exchange: 'dead.dest.test' }] },
    'null-mx.test': { MX: [{ preference: 0, exchange: '.' }] },
    'implicit.test': { A: ['127.0.0.3'] },
    'no-address.test': { TXT: ['v=spf1 -all'] },
    'public-smtp.test': { A: ['93.184.216.34'] },
    'mixed-smtp.test': { A: ['93.184.216.34', '192.168.7.7'] },
    'ghost-mx.test': { MX: [{ preference: 10, exchange: 'ghost.nowhere.test' }] },
  });
  deps = {
    // The MX hosts of these tests are on loopback: allowed here, refused by default (private-mx.test.ts).
    settings: { captureDir: '', smarthost: '', mxPort: one.port, requireTls: false, allowPrivateMx: true },
    resolve: createDnsResolver([dns.address], { cache: false }),
    hostName: 'relay.acme.test',
    log,
    timeouts: { connectionMs: 2000, greetingMs: 2000, socketMs: 5000 },
  };
});

afterAll(async () => {
  await one?.close();
  await three?.close();
  await dns?.close();
});

/** Which receiver took the job's message. */
function takenBy(messageId: string): string | null {
  if (one.messages.some((m) => m.bytes.includes(messageId))) return '127.0.0.1';
  if (three.messages.some((m) => m.bytes.includes(messageId))) return '127.0.0.3';
  return null;
}

describe('MX preference', () => {
  test.each([
    ['low-first.test', 'one.dest.test', '127.0.0.1'],
    ['high-first.test', 'three.dest.test', '127.0.0.3'],
  ])('%s: the most preferred MX (%s) takes the message', async (domain, host, address) => {
    const job = makeJob(`ann@${domain}`);
    const result = await processJob(job, deps);
    expect(result).toMatchObject({ outcome: 'sent', smtp_code: 250, server: `${host}:${one.port}` });
    expect(result.reply).toMatch(/^250 /);
    expect(takenBy(job.message.message_id)).toBe(address);
  });

  test('the first MX refusing connections: the next one takes it, and the result names it', async () => {
    const job = makeJob('ann@fallback.test');
    const result = await processJob(job, deps);
    expect(result).toMatchObject({ outcome: 'sent', server: `three.dest.test:${one.port}` });
    expect(takenBy(job.message.message_id)).toBe('127.0.0.3');
    const tried = lines.find((l) => l.fields?.email_id === job.email_id && l.message.includes('several hosts'));
    expect(tried?.fields?.tried).toEqual([
      { server: `dead.dest.test:${one.port} (127.0.0.9)`, reply: expect.stringContaining('ECONNREFUSED') },
      { server: `three.dest.test:${one.port} (127.0.0.3)`, reply: expect.stringMatching(/^250 /) },
    ]);
  });

  test('every MX refusing connections: deferred, no SMTP code, the last host named', async () => {
    const result = await processJob(makeJob('ann@all-dead.test'), deps);
    expect(result).toMatchObject({ outcome: 'deferred', smtp_code: null, server: `dead.dest.test:${one.port}` });
    expect(result.reply).toContain('ECONNREFUSED');
  });

  test('no MX record: the domain\'s own address is its mail host (RFC 5321 section 5.1)', async () => {
    const job = makeJob('ann@implicit.test');
    const result = await processJob(job, deps);
    expect(result).toMatchObject({ outcome: 'sent', server: `implicit.test:${one.port}` });
    expect(takenBy(job.message.message_id)).toBe('127.0.0.3');
  });
});

describe('domains that take no mail', () => {
  test('null MX ("0 ."): failed for good, nothing tried', async () => {
    const before = one.connections + three.connections;
    const result = await processJob(makeJob('ann@null-mx.test'), deps);
    expect(result).toMatchObject({ outcome: 'failed', smtp_code: null, server: null, reply: 'recipient domain does not accept mail (null MX)' });
    expect(one.connections + three.connections).toBe(before);
  });

  test('NXDOMAIN: failed for good', async () => {
    const result = await processJob(makeJob('ann@nowhere.test'), deps);
    expect(result).toMatchObject({ outcome: 'failed', smtp_code: null, server: null, reply: 'recipient domain nowhere.test does not exist (NXDOMAIN)' });
  });

  test('a domain with neither MX nor address: failed', async () => {
    const result = await processJob(makeJob('ann@no-address.test'), deps);
    expect(result).toMatchObject({ outcome: 'failed', reply: 'recipient domain no-address.test has no MX and no address record' });
  });

  test('an MX host without an address: deferred (it may be published later)', async () => {
    const result = await processJob(makeJob('ann@ghost-mx.test'), deps);
    expect(result).toMatchObject({ outcome: 'deferred', server: null });
    expect(result.reply).toContain('ghost.nowhere.test');
  });

  test('a DNS server that does not answer: deferred, not failed', async () => {
    const deaf = createDnsResolver(['127.0.0.1:9'], { cache: false, timeoutMs: 200, tries: 1 });
    const result = await processJob(makeJob('ann@low-first.test'), { ...deps, resolve: deaf });
    expect(result.outcome).toBe('deferred');
    expect(result.reply).toMatch(/^MX lookup for low-first\.test failed: /);
  });
});

describe('smarthost', () => {
  test('MX-routed mail goes to outbound.smarthost instead, without asking DNS for the MX', async () => {
    const queries = dns.queries.udp + dns.queries.tcp;
    const job = makeJob('ann@low-first.test');
    const result = await processJob(job, { ...deps, settings: { ...deps.settings, smarthost: `127.0.0.3:${three.port}` } });
    expect(result).toMatchObject({ outcome: 'sent', server: `127.0.0.3:${three.port}` });
    expect(takenBy(job.message.message_id)).toBe('127.0.0.3');
    expect(dns.queries.udp + dns.queries.tcp).toBe(queries);
  });

  test('host:port parsing', () => {
    expect(parseHostPort('relay.example.net:2525', 25)).toEqual({ host: 'relay.example.net', port: 2525 });
    expect(parseHostPort('relay.example.net', 25)).toEqual({ host: 'relay.example.net', port: 25 });
    expect(parseHostPort('[2001:db8::1]:587', 25)).toEqual({ host: '2001:db8::1', port: 587 });
    expect(parseHostPort('2001:db8::1', 25)).toEqual({ host: '2001:db8::1', port: 25 });
  });

  const serverRoute = (source: 'project' | 'pool', host: string) =>
    ({ route: { kind: 'smtp' as const, source, host, port: 587, security: 'starttls' as const, username: 'u', password: 'p' } });

  test('a shared pool server (route smtp) is used as given, before any smarthost', async () => {
    const plan = await planDelivery(serverRoute('pool', 'smtp.example.net'), { ...deps.settings, smarthost: '127.0.0.3:2525' }, deps.resolve);
    expect(plan).toMatchObject({
      kind: 'smtp', targets: [{ host: 'smtp.example.net', address: null, port: 587 }], secure: false, starttls: 'required',
      verifyCertificate: true, auth: { user: 'u', pass: 'p' }, via: 'pool',
    });
  });

  test('a project\'s server is resolved here and pinned to its public addresses, the host kept as TLS name', async () => {
    const plan = await planDelivery(serverRoute('project', 'public-smtp.test'), deps.settings, deps.resolve);
    expect(plan).toMatchObject({ kind: 'smtp', targets: [{ host: 'public-smtp.test', address: '93.184.216.34', port: 587 }], via: 'project' });
  });

  test.each([
    ['one.dest.test', 'SMTP server one.dest.test is at 127.0.0.1, a private address (loopback); refused unless smtp_servers.allow_private_targets is set'],
    ['10.20.30.40', 'SMTP server 10.20.30.40 is at 10.20.30.40, a private address (private); refused unless smtp_servers.allow_private_targets is set'],
    ['mixed-smtp.test', 'SMTP server mixed-smtp.test is at 192.168.7.7, a private address (private); refused unless smtp_servers.allow_private_targets is set'],
  ])('a project\'s server at a private address (%s) fails: DNS may have moved it since the edge checked', async (host, reply) => {
    expect(await planDelivery(serverRoute('project', host), deps.settings, deps.resolve)).toEqual({ kind: 'refused', outcome: 'failed', reply });
  });

  test('with smtp_servers.allow_private_targets a project\'s private server is used as given', async () => {
    const plan = await planDelivery(serverRoute('project', 'one.dest.test'), { ...deps.settings, allowPrivateProjectServers: true }, deps.resolve);
    expect(plan).toMatchObject({ kind: 'smtp', targets: [{ host: 'one.dest.test', address: null, port: 587 }] });
  });

  test('a project\'s server whose name does not resolve is deferred', async () => {
    expect(await planDelivery(serverRoute('project', 'gone-smtp.test'), deps.settings, deps.resolve))
      .toEqual({ kind: 'refused', outcome: 'deferred', reply: 'SMTP server gone-smtp.test has no address record' });
  });
});
