import type { SecureContext } from 'node:tls';
import { describe, expect, it } from 'vitest';
import type { CertificateBundle } from '@edgemail/shared';
import type { LoadedCertificate } from './certificate-contexts.js';
import { acmeHostsServed, resolveCertificate, type AcmeChoice } from './resolve-certificate.js';

// Contexts stand in as tokens: resolution only picks among what loaded.
const loaded = (...names: string[]) => new Map(names.map((name) => [name, { name, kind: 'x', notAfter: '2027-01-01T00:00:00.000Z', context: { name } as unknown as SecureContext } satisfies LoadedCertificate]));
const bundle = (over: Partial<CertificateBundle> = {}): CertificateBundle => ({
  generation: 1,
  listeners: { inbound: 'mx1', submission: null },
  acme: { 'mx2.example.net': 'acme:mx2.example.net' },
  self_signed: 'self-signed',
  certificates: {},
  ...over,
});
const acmeOn: AcmeChoice = { enabled: true, hosts: new Set(['mx2.example.net']) };
const acmeOff: AcmeChoice = { enabled: false, hosts: new Set(['mx2.example.net']) };
const pick = (from: { bundle: CertificateBundle; loaded: Map<string, LoadedCertificate> }, listener: string, sni: string | undefined, acme = acmeOn) => {
  const r = resolveCertificate(from, listener, sni, acme);
  return r && `${r.source}:${r.certificate.name}`;
};

describe('listener certificate resolution (the spec\'s order)', () => {
  const all = { bundle: bundle(), loaded: loaded('mx1', 'acme:mx2.example.net', 'self-signed') };

  it('(1) the listener\'s assignment, whatever the SNI name, ACME included', () => {
    expect(pick(all, 'inbound', 'mx2.example.net')).toBe('assigned:mx1');
    expect(pick(all, 'inbound', undefined)).toBe('assigned:mx1');
  });

  it('(2) ACME only with SNI, acme.enabled, the name in acme.hosts and its certificate in the bundle', () => {
    expect(pick(all, 'submission', 'mx2.example.net')).toBe('acme:acme:mx2.example.net');
    expect(pick(all, 'submission', 'MX2.EXAMPLE.NET')).toBe('acme:acme:mx2.example.net');
    expect(pick(all, 'submission', undefined)).toBe('self_signed:self-signed');
    expect(pick(all, 'submission', 'mx2.example.net', acmeOff)).toBe('self_signed:self-signed');
    expect(pick(all, 'submission', 'mx2.example.net', { enabled: true, hosts: new Set() })).toBe('self_signed:self-signed');
    expect(pick({ ...all, bundle: bundle({ acme: {} }) }, 'submission', 'mx2.example.net')).toBe('self_signed:self-signed');
  });

  it('(3) the self-signed pair; nothing when even that is missing', () => {
    expect(pick(all, 'submission', 'other.example.net')).toBe('self_signed:self-signed');
    expect(pick({ bundle: bundle({ self_signed: null, listeners: {} }), loaded: loaded() }, 'inbound', undefined)).toBeNull();
  });

  it('a certificate that did not load counts as absent: the next step answers', () => {
    const partly = { bundle: bundle(), loaded: loaded('self-signed') };
    expect(pick(partly, 'inbound', 'mx2.example.net')).toBe('self_signed:self-signed');
    expect(acmeHostsServed(partly, 'submission', acmeOn)).toEqual([]);
    expect(acmeHostsServed(all, 'submission', acmeOn)).toEqual(['mx2.example.net']);
    expect(acmeHostsServed(all, 'inbound', acmeOn)).toEqual([]);
  });
});
