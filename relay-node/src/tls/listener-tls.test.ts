// Where the listeners' certificates come from, with the edge's two calls as
// functions (the real routes, with a live node, are exercised in
// test/listener-certificates.test.ts).
import { X509Certificate } from 'node:crypto';
import type { SecureContext } from 'node:tls';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { collectingLog, type LogLine } from '../../test-support/inbound-harness.js';
import { EdgeRefusedError, EdgeUnavailableError } from '../edge/errors.js';
import type { CertificateBundle } from '@edgemail/shared';
import { createListenerTls, DEFAULT_POLL_INTERVAL_MS, type ListenerTls } from './listener-tls.js';
import { generateSelfSigned, type GeneratedPair } from './self-signed.js';

const entry = (pair: GeneratedPair, kind: string) => ({ certificate: pair.certificate, private_key: pair.private_key, not_after: pair.not_after, kind });

function bundleOf(generation: number, parts: { selfSigned?: GeneratedPair; inbound?: GeneratedPair; acme?: Record<string, GeneratedPair> }): CertificateBundle {
  const certificates: CertificateBundle['certificates'] = {};
  if (parts.selfSigned) certificates['self-signed'] = entry(parts.selfSigned, 'self_signed');
  if (parts.inbound) certificates.mx1 = entry(parts.inbound, 'issued');
  const acme: Record<string, string> = {};
  for (const [host, pair] of Object.entries(parts.acme ?? {})) {
    acme[host] = `acme:${host}`;
    certificates[`acme:${host}`] = entry(pair, 'acme');
  }
  return {
    generation,
    listeners: { inbound: parts.inbound ? 'mx1' : null, submission: null },
    acme,
    self_signed: parts.selfSigned ? 'self-signed' : null,
    certificates,
  };
}

/** The context the listener's SNICallback picks for `name`, or undefined (the default then). */
const viaSni = (tls: ListenerTls, listener: string, name: string) =>
  new Promise<SecureContext | undefined>((resolve) => tls.forListener(listener).SNICallback(name, (_e, ctx) => resolve(ctx)));

const waitFor = async (ok: () => boolean, ms = 3000) => {
  const end = Date.now() + ms;
  while (!ok() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  expect(ok()).toBe(true);
};

const started: ListenerTls[] = [];
afterEach(() => {
  for (const tls of started.splice(0)) tls.stop();
  vi.useRealTimers();
});

describe('listener TLS', () => {
  it('with no self-signed pair yet makes one for the public host and offers it, then presents what the edge stored', async () => {
    const offered: { certificate: string; private_key: string }[] = [];
    let stored: GeneratedPair | null = null;
    const tls = createListenerTls({
      publicUrl: 'https://mail.example.com',
      log: collectingLog([]),
      edge: {
        certificates: async (holding) => {
          expect(holding).toBeNull();
          return bundleOf(stored ? 2 : 1, { selfSigned: stored ?? undefined });
        },
        offerSelfSigned: async (pair) => {
          offered.push(pair);
          stored ??= { ...pair, not_after: '2027-01-01T00:00:00.000Z' };
          return { ...stored, source: 'self_signed' };
        },
      },
    });
    started.push(tls);
    await tls.start();
    expect(offered).toHaveLength(1);
    expect(new X509Certificate(offered[0]!.certificate).subjectAltName).toBe('DNS:mail.example.com, DNS:*.mail.example.com, DNS:localhost');
    expect(tls.report()).toEqual({ source: 'self_signed', not_after: '2027-01-01T00:00:00.000Z', generation: 2 });
    expect(tls.presented('submission')).toEqual({ source: 'self_signed', certificate: 'self-signed', not_after: '2027-01-01T00:00:00.000Z' });
    expect(tls.generation()).toBe(2);
    const options = tls.forListener('inbound');
    expect(options.secureContext).toBeDefined();
    expect(await viaSni(tls, 'inbound', 'mx.mail.example.com')).toBe(options.secureContext);
  });

  it('presents a stand-in pair while the edge cannot be reached, and the edge\'s once it can', async () => {
    const pair = await generateSelfSigned(['127.0.0.1', 'localhost']);
    let reachable = false;
    const tls = createListenerTls({
      publicUrl: 'http://127.0.0.1:8787',
      log: collectingLog([]),
      startupTimeoutMs: 200,
      edge: {
        certificates: async () => {
          if (!reachable) throw new EdgeUnavailableError('GET /relay/v1/certificates', null, 'ECONNREFUSED');
          return bundleOf(1, { selfSigned: pair });
        },
        offerSelfSigned: async () => {
          throw new Error('not expected');
        },
      },
    });
    started.push(tls);
    await tls.start();
    expect(tls.report()).toMatchObject({ source: 'stand_in' });
    const standIn = tls.forListener('inbound').secureContext;
    const server = { secureContext: new Map<string, SecureContext>() };
    tls.attach('inbound', server);
    expect(server.secureContext.get('*')).toBe(standIn);
    reachable = true;
    // The retry runs on the backoff (first one within a second).
    await waitFor(() => tls.report().source === 'self_signed');
    expect(tls.report()).toEqual({ source: 'self_signed', not_after: pair.not_after, generation: 1 });
    expect(tls.forListener('inbound').secureContext).not.toBe(standIn);
    expect(server.secureContext.get('*')).toBe(tls.forListener('inbound').secureContext);
  });

  it('a node refused the shared certificates (403: not installation-wide) says at info that it presents its own pair, and asks no more', async () => {
    const logs: LogLine[] = [];
    let asked = 0;
    const tls = createListenerTls({
      publicUrl: 'https://mail.example.com',
      log: collectingLog(logs),
      pollIntervalMs: 100,
      edge: {
        certificates: async () => {
          asked++;
          throw new EdgeRefusedError('GET /relay/v1/certificates', 403, 'the shared certificate is served to installation-wide relay nodes only');
        },
        offerSelfSigned: async () => {
          throw new Error('not expected');
        },
      },
    });
    started.push(tls);
    await tls.start();
    await new Promise((r) => setTimeout(r, 1200)); // past the first retry a stand-in start would make, and many poll periods
    expect(tls.report()).toMatchObject({ source: 'stand_in' });
    expect(asked).toBe(1);
    expect(logs.filter((l) => l.level !== 'debug')).toEqual([{
      level: 'info',
      message: 'this node serves its own project only, so the edge keeps the installation\'s shared certificate from it: the listener presents a self-signed pair of its own',
      fields: { names: ['mail.example.com', '*.mail.example.com', 'localhost'] },
    }]);
  });

  it('polls with the generation it holds: a 304 changes nothing; an assignment to inbound is presented there only, and an unassignment falls back', async () => {
    const selfSigned = await generateSelfSigned(['mail.example.com']);
    const mx1 = await generateSelfSigned(['mx1.example.net']);
    let bundle = bundleOf(5, { selfSigned });
    const asked: (number | null)[] = [];
    const tls = createListenerTls({
      publicUrl: 'https://mail.example.com',
      log: collectingLog([]),
      pollIntervalMs: 30,
      edge: {
        certificates: async (holding) => {
          asked.push(holding);
          return holding === bundle.generation ? null : bundle;
        },
        offerSelfSigned: async () => {
          throw new Error('not expected');
        },
      },
    });
    started.push(tls);
    await tls.start();
    const inbound = { secureContext: new Map<string, SecureContext>() };
    const submission = { secureContext: new Map<string, SecureContext>() };
    tls.attach('inbound', inbound);
    tls.attach('submission', submission);
    const selfSignedContext = inbound.secureContext.get('*');
    await waitFor(() => asked.length >= 3);
    expect(asked[0]).toBeNull();
    expect(asked.slice(1).every((g) => g === 5)).toBe(true);
    expect(inbound.secureContext.get('*')).toBe(selfSignedContext); // 304s: nothing rebuilt

    bundle = bundleOf(6, { selfSigned, inbound: mx1 });
    await waitFor(() => tls.generation() === 6);
    expect(tls.presented('inbound')).toEqual({ source: 'assigned', certificate: 'mx1', not_after: mx1.not_after });
    expect(inbound.secureContext.get('*')).not.toBe(selfSignedContext);
    expect(await viaSni(tls, 'inbound', 'anything.example')).toBe(inbound.secureContext.get('*'));
    // The submission listener still presents the self-signed pair, the same context as before (reused, not rebuilt).
    expect(tls.presented('submission')).toMatchObject({ source: 'self_signed', certificate: 'self-signed' });
    expect(submission.secureContext.get('*')).toBe(selfSignedContext);

    bundle = bundleOf(7, { selfSigned });
    await waitFor(() => tls.generation() === 7);
    expect(tls.presented('inbound')).toMatchObject({ source: 'self_signed' });
    expect(inbound.secureContext.get('*')).toBe(selfSignedContext);
  });

  it('chooses ACME for a name in acme.hosts only with acme.enabled, and never for a client without SNI', async () => {
    const selfSigned = await generateSelfSigned(['mail.example.com']);
    const acmePair = await generateSelfSigned(['mx2.example.net']);
    const bundle = bundleOf(1, { selfSigned, acme: { 'mx2.example.net': acmePair, 'other.example.net': acmePair } });
    const make = (enabled: boolean) => createListenerTls({
      publicUrl: 'https://mail.example.com',
      log: collectingLog([]),
      acme: { enabled, hosts: ['MX2.example.net'] },
      edge: { certificates: async () => bundle, offerSelfSigned: async () => { throw new Error('not expected'); } },
    });
    const on = make(true);
    const off = make(false);
    started.push(on, off);
    await on.start();
    await off.start();
    const onDefault = on.forListener('inbound').secureContext;
    const acmeContext = await viaSni(on, 'inbound', 'mx2.example.net');
    expect(acmeContext).toBeDefined();
    expect(acmeContext).not.toBe(onDefault);
    expect(await viaSni(on, 'submission', 'MX2.Example.Net')).toBe(acmeContext);
    // In the bundle but not in this node's acme.hosts: the self-signed pair.
    expect(await viaSni(on, 'inbound', 'other.example.net')).toBe(onDefault);
    expect(await viaSni(off, 'inbound', 'mx2.example.net')).toBe(off.forListener('inbound').secureContext);
    expect(on.presented('inbound')).toEqual({ source: 'self_signed', certificate: 'self-signed', not_after: selfSigned.not_after, acme_hosts: ['mx2.example.net'] });
    expect(off.presented('inbound')).not.toHaveProperty('acme_hosts');
  });

  it('an assigned certificate wins over ACME for every name', async () => {
    const selfSigned = await generateSelfSigned(['mail.example.com']);
    const mx1 = await generateSelfSigned(['mx1.example.net']);
    const acmePair = await generateSelfSigned(['mx2.example.net']);
    const tls = createListenerTls({
      publicUrl: 'https://mail.example.com',
      log: collectingLog([]),
      acme: { enabled: true, hosts: ['mx2.example.net'] },
      edge: { certificates: async () => bundleOf(1, { selfSigned, inbound: mx1, acme: { 'mx2.example.net': acmePair } }), offerSelfSigned: async () => { throw new Error('not expected'); } },
    });
    started.push(tls);
    await tls.start();
    const assigned = tls.forListener('inbound').secureContext;
    expect(await viaSni(tls, 'inbound', 'mx2.example.net')).toBe(assigned);
    expect(await viaSni(tls, 'submission', 'mx2.example.net')).not.toBe(tls.forListener('submission').secureContext);
  });

  it('a certificate that does not load is skipped with a warning, and the rest are presented', async () => {
    const selfSigned = await generateSelfSigned(['mail.example.com']);
    const other = await generateSelfSigned(['mx1.example.net']);
    const logs: LogLine[] = [];
    const bundle = bundleOf(1, { selfSigned, inbound: { ...other, private_key: selfSigned.private_key } });
    const tls = createListenerTls({
      publicUrl: 'https://mail.example.com',
      log: collectingLog(logs),
      edge: { certificates: async () => bundle, offerSelfSigned: async () => { throw new Error('not expected'); } },
    });
    started.push(tls);
    await tls.start();
    expect(tls.presented('inbound')).toMatchObject({ source: 'self_signed', certificate: 'self-signed' });
    expect(logs.filter((l) => l.level === 'warn')).toEqual([expect.objectContaining({
      message: 'a certificate from the edge does not load; skipped (the others are presented as usual)',
      fields: expect.objectContaining({ certificate: 'mx1', kind: 'issued' }),
    })]);
  });

  it('offers a fresh self-signed pair when the stored one is within 30 days of its end, and not before', async () => {
    const day = 86_400_000;
    const selfSigned = await generateSelfSigned(['mail.example.com']);
    let clock = Date.parse(selfSigned.not_after) - 31 * day;
    let bundle = bundleOf(1, { selfSigned });
    const offered: string[] = [];
    const tls = createListenerTls({
      publicUrl: 'https://mail.example.com',
      log: collectingLog([]),
      now: () => clock,
      pollIntervalMs: 20,
      edge: {
        certificates: async (holding) => (holding === bundle.generation ? null : bundle),
        offerSelfSigned: async (pair) => {
          offered.push(pair.certificate);
          const renewed = { ...pair, not_after: new Date(clock + 397 * day).toISOString() };
          bundle = bundleOf(2, { selfSigned: renewed });
          return { ...renewed, source: 'self_signed' };
        },
      },
    });
    started.push(tls);
    await tls.start();
    await new Promise((r) => setTimeout(r, 100));
    expect(offered).toHaveLength(0);
    clock += 2 * day; // 29 days left: the next poll (a 304) renews
    await waitFor(() => tls.generation() === 2);
    expect(offered).toHaveLength(1);
    expect(tls.presented('inbound').not_after).toBe(bundle.certificates['self-signed']!.not_after);
  });

  it('polls every 15 s by default', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const selfSigned = await generateSelfSigned(['mail.example.com']);
    let asked = 0;
    const tls = createListenerTls({
      publicUrl: 'https://mail.example.com',
      log: collectingLog([]),
      edge: { certificates: async (holding) => { asked++; return holding === 1 ? null : bundleOf(1, { selfSigned }); }, offerSelfSigned: async () => { throw new Error('not expected'); } },
    });
    started.push(tls);
    await tls.start();
    expect(DEFAULT_POLL_INTERVAL_MS).toBe(15_000);
    expect(asked).toBe(1);
    await vi.advanceTimersByTimeAsync(14_999);
    expect(asked).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(asked).toBe(2);
  });
});
