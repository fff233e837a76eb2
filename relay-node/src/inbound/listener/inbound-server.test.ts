import { Transform } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { startInbound, type RunningInbound } from '../../../test-support/inbound-harness.js';
import { sendMessage } from '../../../test-support/smtp-client.js';
import { openRaw, openRawAtData } from '../../../test-support/smtp-raw.js';
import { smtpReply } from '../../smtp/smtp-reply.js';

const MESSAGE = 'From: a@sender.test\r\nTo: b@inbox.test\r\nSubject: hello\r\n\r\nHello.\r\n';

describe('inbound listener', () => {
  let inbound: RunningInbound | undefined;
  afterEach(async () => {
    await inbound?.close();
    inbound = undefined;
  });

  it('accepts mail for a registered domain and hands the store the bytes and the envelope', async () => {
    inbound = await startInbound();
    const result = await sendMessage({ port: inbound.port, from: 'a@sender.test', to: ['b@inbox.test', 'c@INBOX.test'], message: MESSAGE, helo: 'client.sender.test' });
    expect(result.response).toMatch(/^250 2\.6\.0 /);
    const [stored] = inbound.store.messages;
    expect(stored!.data.toString()).toBe(MESSAGE);
    expect(stored!.envelope).toMatchObject({ clientAddress: '127.0.0.1', helo: 'client.sender.test', mailFrom: 'a@sender.test', rcptTo: ['b@inbox.test', 'c@INBOX.test'], tls: null });
    expect(stored!.verdicts.auth).toMatchObject({ client_ip: '127.0.0.1' });
  });

  it('refuses a recipient in a domain nobody registered with 550 5.1.1 naming it', async () => {
    inbound = await startInbound();
    const refused = await sendMessage({ port: inbound.port, from: 'a@sender.test', to: 'x@nowhere.test', message: MESSAGE });
    expect(refused.error?.responseCode).toBe(550);
    expect(refused.error?.response).toBe('550 5.1.1 <x@nowhere.test>: recipient domain nowhere.test is not served here');
    // A served recipient beside it still gets the message.
    const mixed = await sendMessage({ port: inbound.port, from: 'a@sender.test', to: ['x@nowhere.test', 'b@inbox.test'], message: MESSAGE });
    expect(mixed.response).toMatch(/^250 /);
    expect(inbound.store.messages.at(-1)!.envelope.rcptTo).toEqual(['b@inbox.test']);
  });

  it('answers 451 4.3.0 when the edge cannot say whether it serves the domain', async () => {
    inbound = await startInbound({ deps: { recipientDomainAccepted: () => Promise.reject(new Error('edge unreachable')) } });
    const result = await sendMessage({ port: inbound.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE });
    expect(result.error?.response).toMatch(/^451 4\.3\.0 /);
  });

  it('advertises SIZE, no AUTH, and refuses AUTH', async () => {
    inbound = await startInbound();
    const raw = await openRaw(inbound.port);
    expect(await raw.reply()).toMatch(/^220 mx\.edgemail\.test ESMTP/);
    const ehlo = await raw.command('EHLO client.test');
    expect(ehlo).toMatch(/^250[- ]SIZE 65536$/m);
    expect(ehlo).toContain('ENHANCEDSTATUSCODES');
    expect(ehlo).not.toMatch(/AUTH|STARTTLS/);
    expect(await raw.command('AUTH PLAIN AGJvYgBzZWNyZXQ=')).toMatch(/^500 5\.5\.2 /); // not offered on an MX
    raw.close();
  });

  it('refuses MAIL FROM with SIZE= above the limit with 552 5.3.4', async () => {
    inbound = await startInbound();
    // nodemailer itself will not send a SIZE= above the advertised limit, so this one is by hand.
    const raw = await openRaw(inbound.port);
    await raw.reply();
    await raw.command('EHLO client.test');
    expect(await raw.command('MAIL FROM:<a@sender.test> SIZE=65537')).toMatch(/^552 5\.3\.4 /);
    expect(await raw.command('MAIL FROM:<a@sender.test> SIZE=65536')).toMatch(/^250 /);
    raw.close();
    // A declared size within the limit goes through with a real client.
    const result = await sendMessage({ port: inbound.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE, size: MESSAGE.length });
    expect(result.response).toMatch(/^250 /);
  });

  it('without SIZE=, reads an oversize message to the dot, stores nothing, answers 552 5.3.4 and goes on', async () => {
    inbound = await startInbound();
    const raw = await openRawAtData(inbound.port);
    raw.write(`Subject: big\r\n\r\n${'x'.repeat(998)}\r\n`.repeat(1).concat(`${'y'.repeat(998)}\r\n`.repeat(100)));
    expect(await raw.command('.')).toBe('552 5.3.4 Message exceeds the fixed maximum message size of 65536 bytes');
    expect(inbound.store.messages).toHaveLength(0);
    expect(inbound.store.abandoned).toHaveLength(1);
    // The session is still in step: the next transaction is accepted.
    await raw.command('MAIL FROM:<a@sender.test>');
    await raw.command('RCPT TO:<b@inbox.test>');
    await raw.command('DATA');
    expect(await raw.command(`${MESSAGE}.`)).toMatch(/^250 2\.6\.0 /);
    expect(inbound.store.messages).toHaveLength(1);
    raw.close();
  });

  it('keeps nothing from a client that leaves in the middle of the data, and stays up', async () => {
    inbound = await startInbound();
    const raw = await openRawAtData(inbound.port);
    raw.write('Subject: cut short\r\n\r\nhalf a mess');
    await new Promise((resolve) => setTimeout(resolve, 50));
    raw.close();
    await expect.poll(() => inbound!.store.abandoned.length).toBe(1);
    expect(inbound.store.messages).toHaveLength(0);
    expect((await sendMessage({ port: inbound.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE })).response).toMatch(/^250 /);
  });

  it('closes a session whose command line is over the cap', async () => {
    inbound = await startInbound();
    const raw = await openRaw(inbound.port);
    await raw.reply();
    await raw.command('EHLO client.test');
    expect(await raw.command(`MAIL FROM:<${'a'.repeat(3000)}@sender.test>`)).toBe('421 4.4.2 Error: Command line too long');
    await raw.closed;
  });

  it('refuses a header block over the header cap with 552 5.3.4', async () => {
    inbound = await startInbound();
    const header = Array.from({ length: 200 }, (_, i) => `X-Filler-${i}: ${'h'.repeat(60)}`).join('\r\n');
    const result = await sendMessage({ port: inbound.port, from: 'a@sender.test', to: 'b@inbox.test', message: `${header}\r\n\r\nbody\r\n` });
    expect(result.error?.response).toBe('552 5.3.4 Message header exceeds the maximum header size of 8192 bytes');
    expect(inbound.store.messages).toHaveLength(0);
  });

  it('accepts 8-bit and non-UTF-8 header bytes and stores them unchanged', async () => {
    inbound = await startInbound();
    const message = Buffer.concat([
      Buffer.from('From: =?x?= '),
      Buffer.from('Jos\xe9 <jose@sender.test>\r\n', 'latin1'), // ISO-8859-1, not UTF-8
      Buffer.from('Subject: caf\u00e9 \u2603 \u00fcber\r\n', 'utf8'),
      Buffer.from('X-Raw: \xff\xfe\x80\r\n\r\n', 'latin1'),
      Buffer.from('D\xe9j\xe0 vu\r\n', 'latin1'),
    ]);
    const result = await sendMessage({ port: inbound.port, from: 'jose@sender.test', to: 'b@inbox.test', message });
    expect(result.response).toMatch(/^250 /);
    expect(inbound.store.messages[0]!.data.equals(message)).toBe(true);
  });

  it('refuses new sessions past the per-address rate with 421 4.7.0; other addresses are unaffected', async () => {
    inbound = await startInbound({ options: { ratePerMinute: 3 } });
    const from = (localAddress: string) => sendMessage({ port: inbound!.port, localAddress, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE });
    for (let i = 0; i < 3; i++) expect((await from('127.0.0.2')).response).toMatch(/^250 /);
    const refused = await from('127.0.0.2');
    expect(refused.error?.response).toMatch(/^421 4\.7\.0 /);
    expect((await from('127.0.0.3')).response).toMatch(/^250 /);
    const raw = await openRaw(inbound.port, { localAddress: '127.0.0.2' });
    expect(await raw.reply()).toBe('421 4.7.0 Too many new sessions from your address, try again later');
    await raw.closed;
  });

  it('waits the configured greeting delay and refuses a client that talks first', async () => {
    inbound = await startInbound({ options: { greetingDelayMs: 300 } });
    const eager = await openRaw(inbound.port);
    eager.write('EHLO eager.test\r\n');
    expect(await eager.reply()).toMatch(/^421 .*talk too soon/i);
    eager.close();
    const patient = await openRaw(inbound.port);
    const started = Date.now();
    expect(await patient.reply()).toMatch(/^220 /);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    patient.close();
  });

  it('greets at once when the delay is 0', async () => {
    inbound = await startInbound();
    const started = Date.now();
    const raw = await openRaw(inbound.port);
    expect(await raw.reply()).toMatch(/^220 /);
    expect(Date.now() - started).toBeLessThan(80);
    raw.close();
  });

  it('answers 250 only after the store resolved', async () => {
    inbound = await startInbound();
    let open!: () => void;
    inbound.store.gate = new Promise<void>((resolve) => (open = resolve));
    let answered = false;
    const sending = sendMessage({ port: inbound.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE }).then((r) => {
      answered = true;
      return r;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    open();
    expect((await sending).response).toMatch(/^250 /);
  });

  it("passes on the store's own refusal, and answers 451 4.3.0 for its other failures", async () => {
    inbound = await startInbound({ deps: { store: async () => { throw smtpReply(452, '4.3.1 Spool full, try again later'); } } });
    expect((await sendMessage({ port: inbound.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE })).error?.response)
      .toBe('452 4.3.1 Spool full, try again later');
    await inbound.close();
    inbound = await startInbound({ deps: { store: async () => { throw new Error('EIO'); } } });
    expect((await sendMessage({ port: inbound.port, from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE })).error?.response)
      .toMatch(/^451 4\.3\.0 /);
    expect(inbound.logs.some((l) => l.level === 'error' && String(l.fields?.error).includes('EIO'))).toBe(true);
  });

  it('runs the data through plugged-in transforms, whose refusal is the reply', async () => {
    const refuseBareLf = () => new Transform({
      transform(chunk: Buffer, _encoding, done) {
        if (/(^|[^\r])\n/.test(chunk.toString('latin1'))) return done(smtpReply(554, '5.5.0 Bare line feed in message data'));
        done(null, chunk);
      },
    });
    inbound = await startInbound({ deps: { transforms: () => [refuseBareLf()] } });
    const raw = await openRawAtData(inbound.port);
    expect(await raw.command('Subject: smuggle\r\n\r\nhello\n.\r\nMAIL FROM:<evil@x.test>\r\n.')).toBe('554 5.5.0 Bare line feed in message data');
    expect(inbound.store.messages).toHaveLength(0);
    expect(await raw.command('MAIL FROM:<a@sender.test>')).toMatch(/^250 /);
    raw.close();
  });
});
