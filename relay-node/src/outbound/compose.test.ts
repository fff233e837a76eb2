// What leaves the node: the composed message (headers, parts, attachments, no
// Bcc) and its DKIM signature, verified by mailauth's own verifier on the
// bytes a real SMTP server received, with the key published in a real DNS server.
import { authenticate } from 'mailauth';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../test-support/dns-server.js';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import type { Log } from '../log.js';
import { composeMessage, composeSignedMessage, DkimSignError } from './compose.js';
import { processJob, type ProcessJobDeps } from './process-job.js';
import { makeDkimKey, makeJob } from '../../test-support/jobs.js';
import { startReceiver, type Receiver } from '../../test-support/receiver.js';

const silent: Log = { info() {}, warn() {}, error() {} };
const keys = { rsa: makeDkimKey('rsa'), ed25519: makeDkimKey('ed25519') };

let dns: TestDnsServer;
let receiver: Receiver;
let deps: ProcessJobDeps;

beforeAll(async () => {
  dns = await startDnsServer({
    'dest.test': { MX: [{ preference: 10, exchange: 'mx1.dest.test' }] },
    'mx1.dest.test': { A: ['127.0.0.1'] },
    [keys.rsa.name]: { TXT: [keys.rsa.record] },
    [keys.ed25519.name]: { TXT: [keys.ed25519.record] },
    'acme.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
  });
  receiver = await startReceiver();
  deps = {
    settings: { captureDir: '', smarthost: '', mxPort: receiver.port, requireTls: false, allowPrivateMx: true },
    resolve: createDnsResolver([dns.address], { cache: false }),
    hostName: 'relay.acme.test',
    log: silent,
  };
});

afterAll(async () => {
  await receiver?.close();
  await dns?.close();
});

describe('composeMessage', () => {
  test('headers from the job, text and html as alternatives, attachments from base64, custom headers', async () => {
    const job = makeJob('ann@dest.test', {
      message: {
        message_id: '<m1@acme.test>',
        date: '2026-11-26T02:00:00.000Z',
        from: 'Acme <news@acme.test>',
        to: ['Ann <ann@dest.test>', 'bob@dest.test'],
        cc: ['carol@dest.test'],
        reply_to: ['support@acme.test'],
        subject: 'Grüße from Acme',
        text: 'plain body',
        html: '<p>html body</p>',
        headers: { 'X-Campaign': 'autumn', 'List-Unsubscribe': '<mailto:unsub@acme.test>' },
        attachments: [{ filename: 'a.pdf', content_type: 'application/pdf', content_base64: Buffer.from('%PDF-1.4 test').toString('base64') }],
      },
    });
    const bytes = await composeMessage(job.message);
    const text = bytes.toString('latin1');
    expect(text).toMatch(/\r\n\r\n/); // CRLF throughout
    expect(text).not.toMatch(/[^\r]\n/);
    expect(text).not.toMatch(/^bcc:/im);
    const parsed = await simpleParser(bytes);
    expect(parsed.messageId).toBe('<m1@acme.test>');
    expect(parsed.date?.toISOString()).toBe('2026-11-26T02:00:00.000Z');
    expect(parsed.from?.value).toEqual([{ address: 'news@acme.test', name: 'Acme' }]);
    expect((Array.isArray(parsed.to) ? parsed.to : [parsed.to]).flatMap((a) => a!.value.map((v) => v.address))).toEqual(['ann@dest.test', 'bob@dest.test']);
    expect((parsed.cc as { value: { address: string }[] }).value.map((v) => v.address)).toEqual(['carol@dest.test']);
    expect((parsed.replyTo as { value: { address: string }[] }).value.map((v) => v.address)).toEqual(['support@acme.test']);
    expect(parsed.subject).toBe('Grüße from Acme');
    expect(parsed.text?.trim()).toBe('plain body');
    expect(parsed.html).toContain('<p>html body</p>');
    expect(parsed.headers.get('x-campaign')).toBe('autumn');
    expect(text).toMatch(/multipart\/alternative/);
    expect(parsed.attachments).toHaveLength(1);
    expect(parsed.attachments[0]!.filename).toBe('a.pdf');
    expect(parsed.attachments[0]!.contentType).toBe('application/pdf');
    expect(parsed.attachments[0]!.content.toString()).toBe('%PDF-1.4 test');
  });

  test('a custom header cannot replace a header the job sets', async () => {
    const job = makeJob('ann@dest.test', { message: { subject: 'the real one', headers: { Subject: 'forged', From: 'x@evil.test' } } });
    const parsed = await simpleParser(await composeMessage(job.message));
    expect(parsed.subject).toBe('the real one');
    expect(parsed.from?.value[0]?.address).toBe('news@acme.test');
  });

  test('a key mailauth cannot use is an error, never an unsigned message', async () => {
    const job = makeJob('ann@dest.test', { dkim: { ...keys.rsa.dkim, private_key_pem: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' } });
    await expect(composeSignedMessage(job, { signTime: new Date() })).rejects.toBeInstanceOf(DkimSignError);
  });

  test('a job whose From is two mailboxes is failed (permanent, the reason named), never deferred, and nothing is sent', async () => {
    const job = makeJob('ann@dest.test', { dkim: keys.rsa.dkim, message: { from: 'ceo@bank.example, Foo <news@acme.test>' } });
    const result = await processJob(job, deps);
    expect(result).toMatchObject({
      outcome: 'failed', smtp_code: null, server: null,
      reply: 'from must be exactly one mailbox, not "ceo@bank.example, Foo <news@acme.test>"',
    });
    expect(receiver.messages.some((m) => m.bytes.includes(job.message.message_id))).toBe(false);
  });
});

describe('DKIM on what arrived', () => {
  test.each(['rsa', 'ed25519'] as const)('%s: the receiver verifies the signature (mailauth, key from DNS)', async (algorithm) => {
    const key = keys[algorithm];
    const job = makeJob('ann@dest.test', {
      dkim: key.dkim,
      message: {
        cc: ['carol@dest.test'],
        reply_to: ['support@acme.test'],
        html: '<p>hi</p>',
        headers: { 'X-Campaign': 'autumn' },
        attachments: [{ filename: 'n.txt', content_type: 'text/plain', content_base64: Buffer.from('note').toString('base64') }],
      },
    });
    const result = await processJob(job, deps);
    expect(result).toMatchObject({ outcome: 'sent', smtp_code: 250, server: `mx1.dest.test:${receiver.port}` });
    const arrived = receiver.messages.find((m) => m.bytes.includes(job.message.message_id));
    expect(arrived).toBeDefined();
    const bytes = arrived!.bytes;
    // The signature header goes first.
    expect(bytes.toString().split('\r\n')[0]).toMatch(/^DKIM-Signature: /);
    const signature = bytes.toString().split(/\r\n(?![ \t])/)[0]!.replace(/\r\n[ \t]+/g, ' ');
    expect(signature).toMatch(new RegExp(`a=${algorithm}-sha256;`));
    expect(signature).toMatch(/c=relaxed\/relaxed;/);
    expect(signature).toMatch(/d=acme\.test;/);
    expect(signature).toMatch(new RegExp(`s=${key.dkim.selector};`));
    expect(signature).toMatch(new RegExp(`t=${Math.floor(Date.parse(result.started_at) / 1000)};`));
    const signed = /h=([^;]+);/.exec(signature)![1]!.replace(/\s+/g, '').toLowerCase().split(':');
    for (const name of ['from', 'to', 'cc', 'subject', 'date', 'message-id', 'reply-to', 'mime-version', 'content-type', 'x-campaign']) expect(signed).toContain(name);

    const verdict = await authenticate(bytes, {
      ip: '127.0.0.1',
      helo: 'relay.acme.test',
      sender: 'news@acme.test',
      mta: 'mx.test',
      resolver: createDnsResolver([dns.address], { cache: false }),
      disableArc: true,
      disableBimi: true,
    });
    const dkim = verdict.dkim.results ?? [];
    expect(dkim.map((r) => [r.signingDomain, r.status.result])).toEqual([['acme.test', 'pass']]);
    expect(verdict.dmarc && verdict.dmarc.status.result).not.toBe('fail');

    // The verifier is not a rubber stamp: a changed signed header fails.
    const tampered = Buffer.from(bytes.toString().replace(/^Subject: .*$/m, 'Subject: changed\r'));
    const again = await authenticate(tampered, { ip: '127.0.0.1', helo: 'relay.acme.test', sender: 'news@acme.test', mta: 'mx.test', resolver: createDnsResolver([dns.address], { cache: false }), disableArc: true, disableBimi: true });
    expect(again.dkim.results?.[0]?.status.result).toBe('fail');
  });

  test('no Bcc header in the bytes, but the blind recipient gets the envelope', async () => {
    const job = makeJob('hidden@dest.test', {
      dkim: keys.rsa.dkim,
      message: { to: ['visible@dest.test'], subject: 'bcc check' },
    });
    const result = await processJob(job, deps);
    expect(result.outcome).toBe('sent');
    const arrived = receiver.messages.find((m) => m.bytes.includes(job.message.message_id))!;
    expect(arrived.rcptTo).toEqual(['hidden@dest.test']);
    expect(arrived.mailFrom).toBe('news@acme.test');
    const text = arrived.bytes.toString();
    expect(text).not.toMatch(/^bcc:/im);
    expect(text).not.toContain('hidden@dest.test');
    expect(text).toMatch(/^To: visible@dest\.test\r$/m);
  });
});
