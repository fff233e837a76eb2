// The listener's store wired to the real spool: 250 only once the message and
// its metadata are on disk, bare line endings normalised, DMARC rejects kept
// with smtp_rejected, refusals leaving nothing behind.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../../test-support/dns-server.js';
import { startInbound, type RunningInbound } from '../../../test-support/inbound-harness.js';
import { sendMessage } from '../../../test-support/smtp-client.js';
import { openRawAtData } from '../../../test-support/smtp-raw.js';
import { openSpool, type Spool } from '../../spool/index.js';
import { createSpoolStore, ingestTransforms } from './spool-store.js';
import type { SpooledMeta } from './spooled-message.js';

let dir = '';
let dns: TestDnsServer;
let spool: Spool<SpooledMeta>;
let inbound: RunningInbound;
const spooled: string[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'relay-ingest-'));
  dns = await startDnsServer({
    'example.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
    '_dmarc.example.test': { TXT: ['v=DMARC1; p=reject'] },
  });
  spool = await openSpool<SpooledMeta>(dir);
  inbound = await startInbound({
    domains: ['inbox.test', 'xn--bcher-kva.test'],
    dnsServer: dns.address,
    deps: { store: createSpoolStore({ spool, hostName: 'mx.edgemail.test', log: { info() {}, warn() {}, error() {} }, onSpooled: (id) => spooled.push(id) }), transforms: ingestTransforms('normalize', 2048) },
  });
});
afterAll(async () => {
  await inbound?.close();
  await dns?.close();
  rmSync(dir, { recursive: true, force: true });
});

const last = async () => {
  const ids = await spool.list();
  return spool.read(ids.at(-1)!);
};

describe('the spool store behind the listener', () => {
  it('answers 250 with the message and everything the forwarder needs on disk', async () => {
    const result = await sendMessage({ port: inbound.port, from: 'a@example.test', to: ['b@inbox.test'], helo: 'client.example.test', message: 'From: a@example.test\r\nSubject: hi\r\n\r\nHello.\r\n' });
    expect(result.response).toMatch(/^250 /);
    const entry = await last();
    expect(spooled).toEqual([entry.id]);
    expect(readFileSync(join(dir, `${entry.id}.eml`), 'utf8')).toBe('From: a@example.test\r\nSubject: hi\r\n\r\nHello.\r\n');
    expect(entry.meta).toMatchObject({
      format: 1, listener: 'inbound', client_ip: '127.0.0.1', helo: 'client.example.test', mail_from: 'a@example.test', rcpt_to: ['b@inbox.test'],
      tls: null, auth: { spf: 'pass', dmarc: 'pass', aligned: true, client_ip: '127.0.0.1' }, dmarc_policy: 'reject', smtp_rejected: false,
    });
    expect(Date.parse(entry.meta.received_at)).toBeGreaterThan(Date.now() - 60_000);
    expect(entry.meta.trace_headers).toMatch(/^Received: from client\.example\.test \(\[127\.0\.0\.1\]\)\r\n\tby mx\.edgemail\.test with ESMTP id \S+\r\n\tfor <b@inbox\.test>;\r\n\t\w{3}, /);
    expect(entry.meta.trace_headers).toContain('Authentication-Results: mx.edgemail.test;');
  });

  it('spools a DMARC failure on a p=reject domain with smtp_rejected, and answers 550 5.7.1', async () => {
    const result = await sendMessage({ port: inbound.port, localAddress: '127.0.0.7', from: 'a@example.test', to: 'b@inbox.test', message: 'From: a@example.test\r\nSubject: spoof\r\n\r\nx\r\n' });
    expect(result.error?.response).toMatch(/^550 5\.7\.1 /);
    const entry = await last();
    expect(entry.meta).toMatchObject({ client_ip: '127.0.0.7', smtp_rejected: true, dmarc_policy: 'reject', auth: { dmarc: 'fail', aligned: false } });
  });

  it('normalises bare line endings before the bytes reach the disk', async () => {
    const raw = await openRawAtData(inbound.port, { from: 'a@example.test' });
    const reply = await raw.command('Subject: lf\nSmuggled\n.\r\nMAIL FROM:<x@y>\r\n\r\n.');
    raw.close();
    expect(reply).toMatch(/^250 /);
    const entry = await last();
    expect(readFileSync(join(dir, `${entry.id}.eml`), 'utf8')).toBe('Subject: lf\r\nSmuggled\r\n.\r\nMAIL FROM:<x@y>\r\n\r\n');
  });

  it('spools recipients of an internationalised domain as A-labels, however the client wrote them', async () => {
    // smtp-server decodes both spellings to the U-label `bücher.test`; the edge registers the A-label.
    const result = await sendMessage({ port: inbound.port, from: 'a@example.test', to: ['ann@bücher.test', 'ann@xn--bcher-kva.test', 'Bob@XN--BCHER-KVA.test'], message: 'Subject: idn\r\n\r\nx\r\n' });
    expect(result.response).toMatch(/^250 /);
    const entry = await last();
    expect(entry.meta.rcpt_to).toEqual(['ann@xn--bcher-kva.test', 'Bob@xn--bcher-kva.test']);
  });

  it('spools the envelope sender of an internationalised domain as an A-label too (suppressions and filters match the stored form)', async () => {
    const result = await sendMessage({ port: inbound.port, from: 'Ann@XN--BCHER-KVA.test', to: 'b@inbox.test', message: 'Subject: idn sender\r\n\r\nx\r\n' });
    expect(result.response).toMatch(/^250 /);
    expect((await last()).meta.mail_from).toBe('Ann@xn--bcher-kva.test');
  });

  it('keeps nothing of a message past the size cap (552 5.3.4 after the dot)', async () => {
    const before = (await spool.list()).length;
    const result = await sendMessage({ port: inbound.port, from: 'a@example.test', to: 'b@inbox.test', message: `Subject: big\r\n\r\n${'x'.repeat(3000)}\r\n` });
    expect(result.error?.response).toMatch(/^552 5\.3\.4 /);
    expect((await spool.list()).length).toBe(before);
    expect(readdirSync(dir).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });
});
