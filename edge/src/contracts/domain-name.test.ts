import { describe, expect, it } from 'vitest';
import { normalizeDomainName } from './domain-name.js';
import { normalizeAddress } from './email-address.js';

describe('normalizeDomainName', () => {
  it('lower-cases and drops one trailing dot', () => {
    expect(normalizeDomainName('Mail.Example.COM.')).toEqual({ name: 'mail.example.com' });
    expect(normalizeDomainName('xn--bcher-kva.example')).toEqual({ name: 'xn--bcher-kva.example' });
    expect(normalizeDomainName('a-b.c0.example')).toEqual({ name: 'a-b.c0.example' });
  });

  it('takes labels of exactly 63 and names of exactly 253 characters', () => {
    const label63 = 'a'.repeat(63);
    expect(normalizeDomainName(`${label63}.example`)).toEqual({ name: `${label63}.example` });
    const name253 = `${'a'.repeat(61)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(63)}`;
    expect(name253).toHaveLength(253);
    expect(normalizeDomainName(name253)).toEqual({ name: name253 });
    expect(normalizeDomainName(`${name253}.`)).toEqual({ name: name253 });
  });

  it.each([
    ['', 'must not be empty'],
    ['.', 'must not be empty'],
    ['localhost', 'must have at least two labels (example.com)'],
    ['example..com', 'must not contain an empty label'],
    ['.example.com', 'must not contain an empty label'],
    ['example.com..', 'must not contain an empty label'],
    ['-a.example', 'label "-a" must not start or end with a hyphen'],
    ['a-.example', 'label "a-" must not start or end with a hyphen'],
    ['a_b.example', 'label "a_b" may hold only letters, digits and hyphens'],
    ['a b.example', 'must not contain spaces or control characters'],
    ['a\r\n.example', 'must not contain spaces or control characters'],
    ['bücher.example', 'must be ASCII: write an internationalised name in punycode (xn--…)'],
    ['192.168.0.1', 'must not end in an all-numeric label (an IP address is not a domain)'],
    [`${'a'.repeat(64)}.example`, `label "${'a'.repeat(20)}…" is longer than 63 characters`],
    [`${'a.'.repeat(126)}ab`, 'must be at most 253 characters'],
  ])('refuses %j: %s', (input, problem) => {
    expect(normalizeDomainName(input)).toEqual({ problem });
  });
});

describe('normalizeAddress', () => {
  it('keeps the bare address, lower case', () => {
    expect(normalizeAddress('Ann@Example.ORG')).toEqual({ address: 'ann@example.org' });
    expect(normalizeAddress('  <ann@example.org>  ')).toEqual({ address: 'ann@example.org' });
    expect(normalizeAddress('Ann Example <Ann.B+tag@Mail.Example.org.>')).toEqual({ address: 'ann.b+tag@mail.example.org' });
    expect(normalizeAddress('jörg@example.org')).toEqual({ address: 'jörg@example.org' });
  });

  it.each([
    ['', 'must be an email address (local@domain)'],
    ['ann', 'must be an email address (local@domain)'],
    ['@example.org', 'must be an email address (local@domain)'],
    ['ann@', 'must be an email address (local@domain)'],
    ['ann@localhost', 'domain must have at least two labels (example.com)'],
    ['an n@example.org', 'must be an email address'],
    ['ann\r\n@example.org', 'must be an email address'],
    ['.ann@example.org', 'must be an email address: the local part is not a dot-atom'],
    ['a..b@example.org', 'must be an email address: the local part is not a dot-atom'],
    ['"a b"@example.org', 'must be an email address'],
    ['a(b)@example.org', 'must be an email address: the local part is not a dot-atom'],
    [`${'a'.repeat(65)}@example.org`, 'local part must be at most 64 octets'],
    ['ann@bücher.example', 'domain must be ASCII: write an internationalised name in punycode (xn--…)'],
    ['<a@example.org', 'must be an email address'],
  ])('refuses %j: %s', (input, problem) => {
    expect(normalizeAddress(input)).toEqual({ problem });
  });
});
