// Which Message-IDs and Dates of a submitted message are kept (docs/submission.md, "Kept as written").
import { describe, expect, it } from 'vitest';
import { keptHeaders, validDate, validMessageId } from './kept-headers.js';

describe('validMessageId', () => {
  it('keeps RFC 5322 msg-ids, trimmed', () => {
    for (const id of ['<a@b>', '<CAF3x=abc.123@mail.example.com>', "<x!#$%&'*+/=?^_`{|}~-@host.test>", '<left@[192.0.2.1]>']) expect(validMessageId(id)).toBe(id);
    expect(validMessageId('  <a.b@c.d>  ')).toBe('<a.b@c.d>');
  });
  it('refuses anything else', () => {
    for (const id of [undefined, '', 'a@b', '<no-at-sign>', '<a b@c>', '<a@b> (comment)', '<.a@b>', '<a..b@c>', '<a@b.>', '<@b>', '<a@>', '<a@b>\r\nBcc: x@y', `<${'a'.repeat(1000)}@b>`]) {
      expect(validMessageId(id), String(id)).toBeNull();
    }
  });
});

describe('validDate', () => {
  it('reads RFC 5322 date-times into RFC 3339 in their own offset', () => {
    expect(validDate('Tue, 1 Jul 2003 10:52:37 +0200')).toBe('2003-07-01T10:52:37+02:00');
    expect(validDate('1 Jul 2003 10:52 -0330')).toBe('2003-07-01T10:52:00-03:30');
    expect(validDate('Fri, 21 Nov 1997 09:55:06 GMT')).toBe('1997-11-21T09:55:06+00:00');
    expect(validDate('Fri, 21 Nov 1997 09:55:06 PDT')).toBe('1997-11-21T09:55:06-07:00');
    expect(validDate('Sun, 29 Nov 2026 08:00:00 +0000 (UTC)')).toBe('2026-11-29T08:00:00+00:00');
  });
  it('refuses what is not one, or names no real day or time', () => {
    for (const d of [undefined, '', 'yesterday at noon', '2026-11-29T08:00:00Z', 'Sun, 31 Feb 2026 08:00:00 +0000', 'Sun, 29 Nov 2026 25:00:00 +0000',
      'Sun, 29 Nov 2026 08:61:00 +0000', 'Sun, 29 Nov 2026 08:00:00 +9900', 'Sun, 29 Nov 2026 08:00:00', '29 Foo 2026 08:00:00 +0000', 'Sun, 29 Nov 2026 08:00:00 +0000\r\nBcc: x@y']) {
      expect(validDate(d), String(d)).toBeNull();
    }
  });
});

it('keptHeaders keeps only the valid ones', () => {
  expect(keptHeaders({ message_id: '<a@b>', date: 'nonsense' })).toEqual({ messageId: '<a@b>' });
  expect(keptHeaders({ date: '1 Jul 2003 10:52:37 +0200' })).toEqual({ date: '2003-07-01T10:52:37+02:00' });
  expect(keptHeaders({})).toEqual({});
});
