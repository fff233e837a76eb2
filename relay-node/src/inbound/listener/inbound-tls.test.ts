import { createSecureContext } from 'node:tls';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startInbound, type RunningInbound } from '../../../test-support/inbound-harness.js';
import { selfSignedCertificate, type CertificatePair } from '../../../test-support/self-signed.js';
import { sendMessage } from '../../../test-support/smtp-client.js';
import { openRaw } from '../../../test-support/smtp-raw.js';

const MESSAGE = 'From: a@sender.test\r\nTo: b@inbox.test\r\nSubject: tls\r\n\r\nOver TLS.\r\n';

describe('inbound listener TLS', () => {
  let fallback: CertificatePair;
  let named: CertificatePair;
  let inbound: RunningInbound | undefined;

  beforeAll(() => {
    fallback = selfSignedCertificate(['mx.edgemail.test', 'localhost']);
    named = selfSignedCertificate(['mx.customer.test']);
  });
  afterEach(async () => {
    await inbound?.close();
    inbound = undefined;
  });

  it('offers STARTTLS when given a certificate and delivers over it', async () => {
    inbound = await startInbound({ options: { tls: fallback } });
    const result = await sendMessage({ port: inbound.port, tls: 'starttls', from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE });
    expect(result.response).toMatch(/^250 /);
    expect(result.secure).toBe(true);
    expect(inbound.store.messages[0]!.envelope.tls).toMatchObject({ protocol: expect.stringMatching(/^TLSv1\.[23]$/) });
  });

  it('does not offer STARTTLS without a certificate', async () => {
    inbound = await startInbound();
    const raw = await openRaw(inbound.port);
    await raw.reply();
    expect(await raw.command('EHLO client.test')).not.toContain('STARTTLS');
    expect(await raw.command('STARTTLS')).toMatch(/^500 /);
    raw.close();
  });

  it('picks the certificate per handshake through the SNI callback, falling back to the default', async () => {
    const seen: string[] = [];
    const namedContext = createSecureContext(named);
    inbound = await startInbound({
      options: {
        tls: {
          ...fallback,
          SNICallback: (servername, cb) => {
            seen.push(servername);
            cb(null, servername === 'mx.customer.test' ? namedContext : undefined);
          },
        },
      },
    });
    const viaSni = await sendMessage({ port: inbound.port, tls: 'starttls', servername: 'mx.customer.test', from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE });
    expect(viaSni.response).toMatch(/^250 /);
    const other = await sendMessage({ port: inbound.port, tls: 'starttls', servername: 'unknown.test', from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE });
    expect(other.response).toMatch(/^250 /);
    expect(seen).toEqual(['mx.customer.test', 'unknown.test']);
  });

  it('accepts a ready secure context as the default certificate', async () => {
    inbound = await startInbound({ options: { tls: { secureContext: createSecureContext(fallback) } } });
    const result = await sendMessage({ port: inbound.port, tls: 'starttls', from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE });
    expect(result.response).toMatch(/^250 /);
  });

  it('speaks implicit TLS when secure is set', async () => {
    inbound = await startInbound({ options: { tls: fallback, secure: true } });
    const result = await sendMessage({ port: inbound.port, tls: 'implicit', from: 'a@sender.test', to: 'b@inbox.test', message: MESSAGE });
    expect(result.response).toMatch(/^250 /);
    expect(inbound.store.messages[0]!.envelope.tls).not.toBeNull();
  });

  it('ignores commands pipelined behind STARTTLS in plain text', async () => {
    inbound = await startInbound({ options: { tls: fallback } });
    const raw = await openRaw(inbound.port);
    await raw.reply();
    await raw.command('EHLO client.test');
    // The injected MAIL FROM must not run inside the TLS session that follows (CVE-2011-0411 style).
    raw.write('STARTTLS\r\nMAIL FROM:<injected@evil.test>\r\n');
    expect(await raw.reply()).toMatch(/^220 /);
    await raw.startTls();
    expect(await raw.command('EHLO client.test')).toMatch(/^250-/);
    expect(await raw.command('RCPT TO:<b@inbox.test>')).toMatch(/^503 /);
    raw.close();
  });
});
