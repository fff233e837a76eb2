// Exactly one mailbox from what a client wrote, and the header form composed
// from its parts (issue 13 item 3): lists, groups and unquoted specials are
// refused; a composed form reads back as the same name and address.
import { describe, expect, it } from 'vitest';
import { formatMailbox, NOT_ONE_MAILBOX, parseOneMailbox } from './email-address.js';
import { parseMailbox } from './send.js';

describe('parseOneMailbox', () => {
  it.each([
    ['news@acme.test', '', 'news@acme.test'],
    ['  <news@acme.test> ', '', 'news@acme.test'],
    ['Acme News <news@acme.test>', 'Acme News', 'news@acme.test'],
    ['Acme   News<news@acme.test>', 'Acme News', 'news@acme.test'],
    ['"Acme, Inc." <news@acme.test>', 'Acme, Inc.', 'news@acme.test'],
    ['"ceo@bank.example" <news@acme.test>', 'ceo@bank.example', 'news@acme.test'],
    ['"Q \\"x\\" \\\\ R" <a@acme.test>', 'Q "x" \\ R', 'a@acme.test'],
    ['J. Smith <j@acme.test>', 'J. Smith', 'j@acme.test'],
    ['Jörg Müller <j@acme.test>', 'Jörg Müller', 'j@acme.test'],
    ['"Acme" Support <s@acme.test>', 'Acme Support', 's@acme.test'],
  ])('%j is one mailbox: name %j, address %j', (input, name, addrSpec) => {
    expect(parseOneMailbox(input)).toEqual({ name, addrSpec });
  });

  it.each([
    ['ceo@bank.example, Foo <news@acme.test>', NOT_ONE_MAILBOX.list],
    ['ceo@bank.example; news@acme.test', NOT_ONE_MAILBOX.list],
    ['news@acme.test,', NOT_ONE_MAILBOX.list],
    ['Board: ceo@bank.example, news@acme.test;', NOT_ONE_MAILBOX.group],
    ['undisclosed-recipients:;', NOT_ONE_MAILBOX.group],
    ['Foo <news@acme.test> <ceo@bank.example>', NOT_ONE_MAILBOX.twoAddresses],
    ['ceo@bank.example <news@acme.test>', NOT_ONE_MAILBOX.special],
    ['Foo (the CEO) <news@acme.test>', NOT_ONE_MAILBOX.special],
    ['"Foo <news@acme.test>', NOT_ONE_MAILBOX.unterminated],
    ['Foo <news@acme.test> trailing', 'must be an email address'],
    ['Foo <news@acme.test', 'must be an email address'],
    ['news@acme.test>', 'must be an email address'],
  ])('%j is refused: %s', (input, problem) => {
    expect(parseOneMailbox(input)).toEqual({ problem });
  });
});

describe('formatMailbox', () => {
  it.each([
    ['', 'news@acme.test', 'news@acme.test'],
    ['Acme News', 'news@acme.test', 'Acme News <news@acme.test>'],
    ['Jörg Müller', 'j@acme.test', 'Jörg Müller <j@acme.test>'],
    ['Acme, Inc.', 'news@acme.test', '"Acme, Inc." <news@acme.test>'],
    ['J. Smith', 'j@acme.test', '"J. Smith" <j@acme.test>'],
    ['ceo@bank.example, Foo', 'news@acme.test', '"ceo@bank.example, Foo" <news@acme.test>'],
    ['Q "x" \\ R', 'a@acme.test', '"Q \\"x\\" \\\\ R" <a@acme.test>'],
  ])('name %j, address %j → %s, which reads back as the same two', (name, address, header) => {
    expect(formatMailbox(name, address)).toBe(header);
    expect(parseOneMailbox(header)).toEqual({ name, addrSpec: address });
  });
});

describe('parseMailbox (the send body\'s addresses)', () => {
  it('composes the header form from the parts, the domain lower case, never from the text given', () => {
    expect(parseMailbox('  "Acme"   News   <News@Acme.TEST>  ')).toEqual({
      name: 'Acme News', address: 'News@acme.test', key: 'news@acme.test', display: 'Acme News <News@acme.test>',
    });
    expect(parseMailbox('"Acme, Inc." <news@acme.test>')).toMatchObject({ display: '"Acme, Inc." <news@acme.test>' });
  });

  it('refuses the two-mailbox From of the issue, with and without a comma', () => {
    expect(parseMailbox('ceo@bank.example, Foo <news@acme.test>')).toEqual({ problem: NOT_ONE_MAILBOX.list });
    expect(parseMailbox('ceo@bank.example; Foo <news@acme.test>')).toEqual({ problem: NOT_ONE_MAILBOX.list });
  });
});
