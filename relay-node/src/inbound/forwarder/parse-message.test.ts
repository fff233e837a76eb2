import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { clip, parseMessage } from './parse-message.js';

const crlf = (lines: string[]) => Buffer.from(lines.join('\r\n'), 'utf8');

describe('parseMessage', () => {
  it('gives the subject, both bodies, decoded first header values and the attachments', async () => {
    const raw = crlf([
      'Received: from a.example ([192.0.2.1])',
      '\tby mx with ESMTP; Thu, 26 Nov 2026 02:00:00 +0000',
      'Received: from b.example',
      'From: =?UTF-8?Q?Ann_Le=C3=AFa?= <ann@example.org>',
      'To: support@acme.test',
      'Subject: =?UTF-8?B?SGVsbG8g4pyT?=',
      'Message-ID: <abc@example.org>',
      'X-Folded: one',
      '  two',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b1"',
      '',
      '--b1',
      'Content-Type: multipart/alternative; boundary="b2"',
      '',
      '--b2',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Plain body',
      '--b2',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>HTML body <img src="cid:logo"></p>',
      '--b2--',
      '--b1',
      'Content-Type: application/pdf; name="a.pdf"',
      'Content-Disposition: attachment; filename="a.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('%PDF-1.4 tiny').toString('base64'),
      '--b1--',
      '',
    ]);
    const { parsed, attachments } = await parseMessage(Readable.from([raw]));
    expect(parsed).toMatchObject({
      ok: true,
      error: null,
      message_id: '<abc@example.org>',
      subject: 'Hello ✓',
      text: 'Plain body',
      html: '<p>HTML body <img src="cid:logo"></p>',
      attachments: [{ filename: 'a.pdf', content_type: 'application/pdf', size: 13 }],
    });
    expect(parsed.headers.from).toBe('Ann Leïa <ann@example.org>');
    expect(parsed.headers.received).toBe('from a.example ([192.0.2.1])\tby mx with ESMTP; Thu, 26 Nov 2026 02:00:00 +0000');
    // Every value of a repeated header, top first; a header that occurs once is not repeated.
    expect(parsed.repeated_headers).toEqual({ received: ['from a.example ([192.0.2.1])\tby mx with ESMTP; Thu, 26 Nov 2026 02:00:00 +0000', 'from b.example'] });
    expect(parsed.headers['x-folded']).toBe('one  two');
    expect(parsed.headers['content-type']).toBe('multipart/mixed; boundary="b1"');
    expect(attachments).toHaveLength(1);
    expect(Buffer.from(attachments[0]!.content as Uint8Array).toString()).toBe('%PDF-1.4 tiny');
  });

  it('reads raw 8-bit header bytes as UTF-8 and keeps a message without any MIME structure', async () => {
    const raw = Buffer.concat([Buffer.from('Subject: caf'), Buffer.from([0xc3, 0xa9]), Buffer.from('\r\nX-Latin: caf'), Buffer.from([0xe9]), Buffer.from('\r\n\r\nhi\r\n')]);
    const { parsed } = await parseMessage(Readable.from([raw]));
    expect(parsed.ok).toBe(true);
    expect(parsed.subject).toBe('café');
    expect(parsed.headers['x-latin']).toBe('caf\ufffd');
    expect(parsed.text).toBe('hi\n');
  });

  it('keeps every parsed value within the edge\'s limits: a header name over 998 characters left out, a long Message-ID, filename and content type cut', async () => {
    const longName = `X-${'n'.repeat(1_200)}`;
    const raw = crlf([
      `${longName}: first`,
      `${longName}: second`,
      `Message-ID: <${'m'.repeat(996)}\u{1F600}@example.org>`, // the cut at 998 falls inside the emoji
      'Subject: odd',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="b"',
      '',
      '--b',
      `Content-Type: application/x-${'t'.repeat(300)}`,
      `Content-Disposition: attachment; filename="${'f'.repeat(1_500)}.pdf"`,
      '',
      'data',
      '--b--',
      '',
    ]);
    const { parsed } = await parseMessage(Readable.from([raw]));
    expect(parsed.ok).toBe(true);
    expect(Object.keys(parsed.headers).filter((k) => k.length > 998)).toEqual([]);
    expect(parsed.repeated_headers).toEqual({});
    expect(parsed.headers.subject).toBe('odd');
    expect(parsed.message_id).toBe(`<${'m'.repeat(996)}`); // 997: the emoji's half is not kept
    expect(parsed.attachments).toEqual([{ filename: 'f'.repeat(1_000), content_type: `application/x-${'t'.repeat(241)}`, size: 4 }]);
  });

  it('clip never splits a surrogate pair', () => {
    expect(clip('ab\u{1F600}', 3)).toBe('ab');
    expect(clip('ab\u{1F600}', 4)).toBe('ab\u{1F600}');
    expect(clip('abc', 2)).toBe('ab');
  });

  it('says ok: false, with the reason, when mailparser refuses the message (over 1,000 parts)', async () => {
    const parts = Array.from({ length: 1100 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join('');
    const raw = Buffer.from(`Content-Type: multipart/mixed; boundary="b"\r\nSubject: bomb\r\n\r\n${parts}--b--\r\n`);
    const { parsed, attachments } = await parseMessage(Readable.from([raw]));
    expect(parsed.ok).toBe(false);
    expect(parsed.error).toBeTruthy();
    expect(attachments).toEqual([]);
  });
  it.each([
    ['a multipart without a boundary parameter', 'multipart/mixed', 'unparseable MIME structure: a multipart/mixed part has no boundary parameter'],
    ['a multipart whose boundary never occurs', 'multipart/mixed; boundary="elsewhere"', 'unparseable MIME structure: the boundary "elsewhere" of a multipart/mixed part never occurs'],
  ])('says ok: false naming the defect for %s', async (_, contentType, error) => {
    const raw = Buffer.from(`Subject: broken\r\nMIME-Version: 1.0\r\nContent-Type: ${contentType}\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nlost\r\n--b--\r\n`);
    expect(await parseMessage(Readable.from([raw]))).toEqual({
      parsed: { ok: false, error, message_id: '', subject: '', text: '', html: '', headers: {}, attachments: [] },
      attachments: [],
    });
  });

  it('finds the defect in a nested part; a multipart missing only its closing delimiter is read leniently', async () => {
    const nested = Buffer.from([
      'Content-Type: multipart/mixed; boundary="outer"', '', '--outer', 'Content-Type: multipart/alternative', '', 'inner text',
      '--outer', 'Content-Type: text/plain', '', 'fine', '--outer--', '',
    ].join('\r\n'));
    expect((await parseMessage(Readable.from([nested]))).parsed).toMatchObject({ ok: false, error: 'unparseable MIME structure: a multipart/alternative part has no boundary parameter' });
    const unterminated = Buffer.from('Content-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nStill readable.\r\n');
    expect((await parseMessage(Readable.from([unterminated]))).parsed).toMatchObject({ ok: true, text: 'Still readable.\n' });
  });
});
