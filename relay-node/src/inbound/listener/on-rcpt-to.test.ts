import { describe, expect, it } from 'vitest';
import { asciiRecipient, recipientDomain } from './on-rcpt-to.js';

describe('recipientDomain', () => {
  it('gives the domain as the edge stores it: lower case, A-label, no trailing dot', () => {
    expect(recipientDomain('Bob@Inbox.TEST')).toBe('inbox.test');
    expect(recipientDomain('bob@inbox.test.')).toBe('inbox.test');
    expect(recipientDomain('bob@bücher.example')).toBe('xn--bcher-kva.example');
    expect(recipientDomain('"a@b"@inbox.test')).toBe('inbox.test');
  });

  it('has no domain for address literals and junk', () => {
    expect(recipientDomain('bob@[192.0.2.1]')).toBeNull();
    expect(recipientDomain('postmaster')).toBeNull();
    expect(recipientDomain('bob@exa mple.test')).toBeNull();
  });
});

describe('asciiRecipient', () => {
  it('keeps the local part and writes the domain as recipientDomain does', () => {
    expect(asciiRecipient('Ann@Bücher.Test')).toBe('Ann@xn--bcher-kva.test');
    expect(asciiRecipient('ann@xn--bcher-kva.test.')).toBe('ann@xn--bcher-kva.test');
    expect(asciiRecipient('"a@b"@bücher.test')).toBe('"a@b"@xn--bcher-kva.test');
    expect(asciiRecipient('ünïcode@bücher.test')).toBe('ünïcode@xn--bcher-kva.test');
  });

  it('leaves what has no domain name as it is', () => {
    expect(asciiRecipient('bob@[192.0.2.1]')).toBe('bob@[192.0.2.1]');
    expect(asciiRecipient('postmaster')).toBe('postmaster');
  });
});
