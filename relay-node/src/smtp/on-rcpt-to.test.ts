import { describe, expect, it } from 'vitest';
import { recipientDomain } from './on-rcpt-to.js';

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
