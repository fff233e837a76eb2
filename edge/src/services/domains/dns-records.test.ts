import { describe, expect, test } from 'vitest';
import type { DnsRecord } from '../../net/doh.js';
import { describeProblem, expectedRecords, firstRequiredProblem, judge, publicHost, spfValue } from './dns-records.js';

const facts = { name: 'acme.test', dkimSelector: 'em202611', dkimAlgorithm: 'rsa', dkimPublicKey: 'QUJD' };
const [dkim, spf, dmarc, mx] = expectedRecords(facts, 'mx.edgemail.test');
const txt = (...values: string[]): DnsRecord[] => values.map((data) => ({ type: 'TXT', data, ttl: 60 }));
const mxs = (...values: string[]): DnsRecord[] => values.map((data) => ({ type: 'MX', data, ttl: 60 }));

test('publicHost and spfValue: include: for a name, ip4:/ip6: for an address', () => {
  expect(publicHost({ 'server.public_url': 'https://Mail.Example.com:8443/x' })).toBe('mail.example.com');
  expect(publicHost({ 'server.public_url': 'http://[::1]:8787' })).toBe('::1');
  expect(spfValue('mail.example.com')).toBe('v=spf1 include:mail.example.com ~all');
  expect(spfValue('203.0.113.7')).toBe('v=spf1 ip4:203.0.113.7 ~all');
  expect(spfValue('2001:db8::1')).toBe('v=spf1 ip6:2001:db8::1 ~all');
});

test('no key yet: no DKIM record', () => {
  expect(expectedRecords({ ...facts, dkimSelector: null, dkimAlgorithm: null, dkimPublicKey: null }, 'h.example').map((r) => r.purpose)).toEqual(['spf', 'dmarc', 'mx']);
});

test('an address as the public host (pnpm dev): SPF names it, no MX suggestion (an MX names a host, never an IP)', () => {
  for (const host of ['127.0.0.1', '2001:db8::1']) {
    const records = expectedRecords(facts, host);
    expect(records.map((r) => r.purpose)).toEqual(['dkim', 'spf', 'dmarc']);
    expect(records.find((r) => r.type === 'MX')).toBeUndefined();
  }
  expect(expectedRecords(facts, 'mx.edgemail.test').filter((r) => r.type === 'MX')).toEqual([
    { type: 'MX', name: 'acme.test', value: '10 mx.edgemail.test', purpose: 'mx', required: false },
  ]);
});

describe('judge', () => {
  test('dkim: our p= anywhere among the values, whitespace ignored; another key is mismatch', () => {
    expect(judge(dkim!, txt('v=DKIM1; k=rsa; p=Q U\tJD'))).toEqual({ ok: true, found: ['v=DKIM1; k=rsa; p=Q U\tJD'] });
    expect(judge(dkim!, txt('p=WFla', 'v=DKIM1;p=QUJD'))).toMatchObject({ ok: true });
    expect(judge(dkim!, txt('v=DKIM1; p=QUJDRA'))).toEqual({ ok: false, found: ['v=DKIM1; p=QUJDRA'], problem: 'mismatch' });
    expect(judge(dkim!, txt('v=DKIM1; p='))).toMatchObject({ ok: false, problem: 'mismatch' }); // a revoked key
    expect(judge(dkim!, [])).toEqual({ ok: false, problem: 'missing' });
  });

  test('spf: exactly one v=spf1 record; other TXT values are not shown', () => {
    expect(judge(spf!, txt('site-verification=1', 'V=SPF1 -all'))).toEqual({ ok: true, found: ['V=SPF1 -all'] });
    expect(judge(spf!, txt('v=spf1'))).toMatchObject({ ok: true });
    expect(judge(spf!, txt('v=spf10 -all', 'site-verification=1'))).toEqual({ ok: false, problem: 'missing' });
    expect(judge(spf!, txt('v=spf1 -all', 'v=spf1 a -all'))).toMatchObject({ ok: false, problem: 'mismatch' });
  });

  test('dmarc: one v=DMARC1 record, any policy', () => {
    expect(judge(dmarc!, txt('v=DMARC1; p=reject'))).toMatchObject({ ok: true });
    expect(judge(dmarc!, txt('v=DMARC1;p=none', 'v=DMARC1; p=reject'))).toMatchObject({ ok: false, problem: 'mismatch' });
    expect(judge(dmarc!, txt('p=none'))).toEqual({ ok: false, problem: 'missing' });
  });

  test('mx: our host among the targets, any priority, case and trailing dot ignored', () => {
    expect(judge(mx!, mxs('20 MX.EdgeMail.test.', '10 other.example.'))).toMatchObject({ ok: true });
    expect(judge(mx!, mxs('10 other.example.'))).toEqual({ ok: false, found: ['10 other.example.'], problem: 'mismatch' });
    expect(judge(mx!, [])).toEqual({ ok: false, problem: 'missing' });
  });
});

test('firstRequiredProblem and describeProblem name the record', () => {
  expect(firstRequiredProblem(facts, { dkim: { ok: true }, spf: { ok: false, problem: 'missing' } })).toBe('SPF record acme.test is missing');
  expect(firstRequiredProblem(facts, { dkim: { ok: false, problem: 'mismatch' }, spf: { ok: true } })).toBe('DKIM record em202611._domainkey.acme.test holds another key');
  expect(firstRequiredProblem(facts, { dkim: { ok: true }, spf: { ok: true } })).toBeNull();
  expect(describeProblem('spf', 'acme.test', { ok: false, problem: 'mismatch' })).toBe('SPF record acme.test is published more than once');
});
