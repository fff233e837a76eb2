// Where the listener's certificate comes from, with the edge's two calls as
// functions (the real routes are exercised in test/relay-inbound.test.ts).
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { collectingLog, type LogLine } from '../../test-support/inbound-harness.js';
import { EdgeRefusedError, EdgeUnavailableError } from '../edge/errors.js';
import type { CertificateAnswer } from '@edgemail/shared';
import { createListenerTls } from './listener-tls.js';
import { generateSelfSigned } from './self-signed.js';

describe('listener TLS', () => {
  it('on 404 makes the pair for the public host and offers it, then presents what the edge answers', async () => {
    const offered: { certificate: string; private_key: string }[] = [];
    let stored: CertificateAnswer | null = null;
    const tls = createListenerTls({
      publicUrl: 'https://mail.example.com',
      log: collectingLog([]),
      edge: {
        certificate: async (query) => {
          expect(query).toEqual({ listener: 'inbound', name: 'mail.example.com' });
          return stored;
        },
        offerSelfSigned: async (pair) => {
          offered.push(pair);
          stored ??= { ...pair, source: 'self_signed', not_after: '2027-01-01T00:00:00.000Z' };
          return stored;
        },
      },
    });
    await tls.start();
    tls.stop();
    expect(offered).toHaveLength(1);
    expect(new X509Certificate(offered[0]!.certificate).subjectAltName).toBe('DNS:mail.example.com, DNS:*.mail.example.com, DNS:localhost');
    expect(tls.report()).toEqual({ source: 'self_signed', not_after: '2027-01-01T00:00:00.000Z' });
    const options = tls.inboundTls();
    expect(options.secureContext).toBeDefined();
    const viaSni = await new Promise((resolve) => options.SNICallback!('mx.mail.example.com', (_e, ctx) => resolve(ctx)));
    expect(viaSni).toBe(options.secureContext);
  });

  it('presents a stand-in pair while the edge cannot be reached, and the edge pair once it can', async () => {
    const pair = await generateSelfSigned(['127.0.0.1', 'localhost']);
    let reachable = false;
    const tls = createListenerTls({
      publicUrl: 'http://127.0.0.1:8787',
      log: collectingLog([]),
      startupTimeoutMs: 200,
      edge: {
        certificate: async () => {
          if (!reachable) throw new EdgeUnavailableError('GET /relay/v1/certificate', null, 'ECONNREFUSED');
          return { certificate: pair.certificate, private_key: pair.private_key, source: 'self_signed', not_after: pair.not_after };
        },
        offerSelfSigned: async () => {
          throw new Error('not expected');
        },
      },
    });
    await tls.start();
    expect(tls.report()).toMatchObject({ source: 'stand_in' });
    const standIn = tls.inboundTls().secureContext;
    reachable = true;
    // The retry runs on the backoff (first one within a second).
    const end = Date.now() + 3000;
    while (tls.report().source !== 'self_signed' && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    tls.stop();
    expect(tls.report()).toEqual({ source: 'self_signed', not_after: pair.not_after });
    expect(tls.inboundTls().secureContext).not.toBe(standIn);
  });
  it('a node refused the shared certificate (403: not installation-wide) says at info that it presents its own pair, and asks no more', async () => {
    const logs: LogLine[] = [];
    let asked = 0;
    const tls = createListenerTls({
      publicUrl: 'https://mail.example.com',
      log: collectingLog(logs),
      edge: {
        certificate: async () => {
          asked++;
          throw new EdgeRefusedError('GET /relay/v1/certificate', 403, 'the shared certificate is served to installation-wide relay nodes only');
        },
        offerSelfSigned: async () => {
          throw new Error('not expected');
        },
      },
    });
    await tls.start();
    await new Promise((r) => setTimeout(r, 1200)); // past the first retry a stand-in start would make
    tls.stop();
    expect(tls.report()).toMatchObject({ source: 'stand_in' });
    expect(asked).toBe(1);
    expect(logs.filter((l) => l.level !== 'debug')).toEqual([{
      level: 'info',
      message: 'this node serves its own project only, so the edge keeps the installation\'s shared certificate from it: the listener presents a self-signed pair of its own',
      fields: { names: ['mail.example.com', '*.mail.example.com', 'localhost'] },
    }]);
  });
});
