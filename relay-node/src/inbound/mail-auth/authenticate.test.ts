import { createSocket, type Socket } from 'node:dgram';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDkimKey, signMessage, type DkimKey } from '../../../test-support/dkim.js';
import { startDnsServer, type TestDnsServer } from '../../../test-support/dns-server.js';
import { createAuthenticator } from './authenticate.js';
import { createDnsResolver } from './dns-resolver.js';
import type { AuthenticateMessage } from './verdicts.js';

const GOOD_IP = '127.0.0.1';
const OTHER_IP = '192.0.2.7';

function message(from: string, extraHeader?: string): string {
  const header = [
    `From: Sender <${from}>`,
    'To: someone@inbox.test',
    'Subject: verdicts',
    'Date: Tue, 25 Nov 2025 10:00:00 +0000',
    `Message-ID: <${Math.random().toString(36).slice(2)}@test>`,
    ...(extraHeader ? [extraHeader] : []),
  ];
  return `${header.join('\r\n')}\r\n\r\nHello there.\r\n`;
}

describe('createAuthenticator', () => {
  let dns: TestDnsServer;
  let authenticate: AuthenticateMessage;
  let example: DkimKey;
  let unrelated: DkimKey;
  let subdomain: DkimKey;
  let relaxedSubdomain: DkimKey;

  beforeAll(async () => {
    example = generateDkimKey('example.test');
    unrelated = generateDkimKey('unrelated.test');
    subdomain = generateDkimKey('mail.strict.test');
    relaxedSubdomain = generateDkimKey('mail.relaxed.test');
    dns = await startDnsServer({
      'example.test': { TXT: [`v=spf1 ip4:${GOOD_IP} -all`] },
      '_dmarc.example.test': { TXT: ['v=DMARC1; p=reject'] },
      [example.recordName]: { TXT: [example.record] },
      'unrelated.test': { TXT: [`v=spf1 ip4:${GOOD_IP} -all`] },
      [unrelated.recordName]: { TXT: [unrelated.record] },
      'soft.test': { TXT: ['v=spf1 ~all'] },
      'nodmarc.test': { TXT: [`v=spf1 ip4:${GOOD_IP} -all`] },
      'quarantine.test': { TXT: ['v=spf1 -all'] },
      '_dmarc.quarantine.test': { TXT: ['v=DMARC1; p=quarantine'] },
      'sampled.test': { TXT: ['v=spf1 -all'] },
      '_dmarc.sampled.test': { TXT: ['v=DMARC1; p=reject; pct=50'] },
      '_dmarc.strict.test': { TXT: ['v=DMARC1; p=reject; adkim=s; aspf=s'] },
      '_dmarc.relaxed.test': { TXT: ['v=DMARC1; p=reject'] },
      [subdomain.recordName]: { TXT: [subdomain.record] },
      [relaxedSubdomain.recordName]: { TXT: [relaxedSubdomain.record] },
    });
    authenticate = createAuthenticator({ resolver: createDnsResolver([dns.address]), mta: 'mx.edgemail.test' });
  });
  afterAll(() => dns?.close());

  it('passes SPF, DKIM and DMARC for an aligned, signed message', async () => {
    const signed = await signMessage(message('a@example.test'), example);
    const result = await authenticate(Readable.from([signed]), { ip: GOOD_IP, helo: 'mail.example.test', sender: 'a@example.test' });
    expect(result.auth).toEqual({ spf: 'pass', dkim: 'pass', dmarc: 'pass', aligned: true, client_ip: GOOD_IP });
    expect(result.dmarcPolicy).toBe('reject');
    expect(result.dmarcReject).toBe(false);
    expect(result.headers).toMatch(/^Received-SPF: pass/m);
    expect(result.headers).toMatch(/Authentication-Results: mx\.edgemail\.test;/);
  });

  it('fails SPF from an address the domain does not list, and DMARC p=reject asks to refuse', async () => {
    const result = await authenticate(Readable.from([message('a@example.test')]), { ip: OTHER_IP, helo: 'spoofer.test', sender: 'a@example.test' });
    expect(result.auth).toEqual({ spf: 'fail', dkim: 'none', dmarc: 'fail', aligned: false, client_ip: OTHER_IP });
    expect(result.dmarcReject).toBe(true);
  });

  it('does not count a valid signature from an unrelated domain as authentication', async () => {
    const signed = await signMessage(message('ceo@example.test'), unrelated);
    const result = await authenticate(Readable.from([signed]), { ip: GOOD_IP, helo: 'mail.unrelated.test', sender: 'bounce@unrelated.test' });
    expect(result.auth).toMatchObject({ spf: 'pass', dkim: 'pass', dmarc: 'fail', aligned: false });
    expect(result.dmarcReject).toBe(true);
  });

  it('aligns by DKIM alone when SPF fails (a forwarded message)', async () => {
    const signed = await signMessage(message('a@example.test'), example);
    const result = await authenticate(Readable.from([signed]), { ip: OTHER_IP, helo: 'forwarder.test', sender: 'a@example.test' });
    expect(result.auth).toMatchObject({ spf: 'fail', dkim: 'pass', dmarc: 'pass', aligned: true });
    expect(result.dmarcReject).toBe(false);
  });

  it('reports softfail, and no DMARC record as none with DMARC-default alignment', async () => {
    const soft = await authenticate(Readable.from([message('a@soft.test')]), { ip: GOOD_IP, helo: 'x.test', sender: 'a@soft.test' });
    expect(soft.auth).toMatchObject({ spf: 'softfail', dkim: 'none', dmarc: 'none', aligned: false });
    expect(soft.dmarcPolicy).toBeNull();

    const aligned = await authenticate(Readable.from([message('news@nodmarc.test')]), { ip: GOOD_IP, helo: 'x.test', sender: 'bounces@nodmarc.test' });
    expect(aligned.auth).toMatchObject({ spf: 'pass', dmarc: 'none', aligned: true });

    const unaligned = await authenticate(Readable.from([message('news@elsewhere.test')]), { ip: GOOD_IP, helo: 'x.test', sender: 'bounces@nodmarc.test' });
    expect(unaligned.auth).toMatchObject({ spf: 'pass', dmarc: 'none', aligned: false });
  });

  it('refuses only p=reject at pct 100: quarantine and sampled reject are not refused', async () => {
    const quarantine = await authenticate(Readable.from([message('a@quarantine.test')]), { ip: OTHER_IP, helo: 'x.test', sender: 'a@quarantine.test' });
    expect(quarantine.auth).toMatchObject({ spf: 'fail', dmarc: 'fail' });
    expect([quarantine.dmarcPolicy, quarantine.dmarcReject]).toEqual(['quarantine', false]);
    const sampled = await authenticate(Readable.from([message('a@sampled.test')]), { ip: OTHER_IP, helo: 'x.test', sender: 'a@sampled.test' });
    expect([sampled.auth.dmarc, sampled.dmarcPolicy, sampled.dmarcReject]).toEqual(['fail', 'reject', false]);
  });

  it('honours strict alignment (adkim=s), which mailauth 4.13 treats as relaxed', async () => {
    const strict = await authenticate(Readable.from([await signMessage(message('a@strict.test'), subdomain)]), { ip: OTHER_IP, helo: 'x.test', sender: 'a@strict.test' });
    expect(strict.auth).toMatchObject({ dkim: 'pass', dmarc: 'fail', aligned: false });
    expect(strict.dmarcReject).toBe(true);
    expect(strict.headers).toMatch(/dmarc=fail \(strict alignment\)/);
    // A subdomain signature aligns under the default relaxed mode.
    const relaxed = await authenticate(Readable.from([await signMessage(message('a@relaxed.test'), relaxedSubdomain)]), { ip: OTHER_IP, helo: 'x.test', sender: 'a@relaxed.test' });
    expect(relaxed.auth).toMatchObject({ dkim: 'pass', dmarc: 'pass', aligned: true });
  });

  it('gives neutral for a signature whose body was changed after signing', async () => {
    const signed = (await signMessage(message('a@example.test'), example)).toString().replace('Hello there.', 'Hello ther3.');
    const result = await authenticate(Readable.from([signed]), { ip: OTHER_IP, helo: 'x.test', sender: 'a@example.test' });
    expect(result.auth).toMatchObject({ dkim: 'neutral', dmarc: 'fail', aligned: false });
  });

  it('gives permerror for DMARC when the message has several From addresses', async () => {
    const twoFroms = message('a@example.test', 'From: b@unrelated.test');
    const result = await authenticate(Readable.from([twoFroms]), { ip: GOOD_IP, helo: 'x.test', sender: 'a@example.test' });
    expect(result.auth).toMatchObject({ dmarc: 'permerror', aligned: false });
    expect(result.dmarcReject).toBe(false);
  });

  describe('when DNS does not answer', () => {
    let silent: Socket;
    let silentAddress: string;
    beforeAll(async () => {
      silent = createSocket('udp4'); // swallows every query
      await new Promise<void>((resolve) => silent.bind(0, '127.0.0.1', () => resolve()));
      silentAddress = `127.0.0.1:${silent.address().port}`;
    });
    afterAll(() => silent.close());

    it('answers temperror instead of failing', async () => {
      const slow = createAuthenticator({ resolver: createDnsResolver([silentAddress], { timeoutMs: 100, tries: 1 }), mta: 'mx.test' });
      const result = await slow(Readable.from([message('a@example.test')]), { ip: GOOD_IP, helo: 'x.test', sender: 'a@example.test' });
      expect(result.auth).toMatchObject({ spf: 'temperror', dmarc: 'temperror', aligned: false });
      expect(result.dmarcReject).toBe(false);
    });

    it('gives up at the deadline with temperror everywhere', async () => {
      const stuck = createAuthenticator({ resolver: createDnsResolver([silentAddress], { timeoutMs: 5000, tries: 3 }), mta: 'mx.test', deadlineMs: 200 });
      const started = Date.now();
      const result = await stuck(Readable.from([message('a@example.test')]), { ip: GOOD_IP, helo: 'x.test', sender: 'a@example.test' });
      expect(Date.now() - started).toBeLessThan(2000);
      expect(result.auth).toEqual({ spf: 'temperror', dkim: 'temperror', dmarc: 'temperror', aligned: false, client_ip: GOOD_IP });
    });
  });
});
