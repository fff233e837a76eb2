import { expect, test } from 'vitest';
import { addressDomain, splitAddress } from './mail-address.js';

test.each([
  ['ann@example.org', { local: 'ann', domain: 'example.org' }],
  ['"a@b"@Example.ORG.', { local: '"a@b"', domain: 'Example.ORG.' }],
  ['@example.org', { local: '', domain: 'example.org' }],
  ['ann@', { local: 'ann', domain: '' }],
  ['postmaster', null],
  ['', null],
])('splitAddress(%j) splits at the last @', (address, parts) => expect(splitAddress(address)).toEqual(parts));

test.each([
  ['ann@example.org', 'example.org'],
  ['Ann@Example.ORG.', 'example.org'],
  ['"a@b"@Mail.Example.org', 'mail.example.org'],
  ['ann@bücher.TEST', 'bücher.test'],
  ['ann@[192.0.2.1]', '[192.0.2.1]'],
  ['ann@', ''],
  ['Example.ORG.', 'example.org'],
])('addressDomain(%j) is %j', (address, domain) => expect(addressDomain(address)).toBe(domain));
