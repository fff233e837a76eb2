import { Readable } from 'node:stream';
import { describe, expect, test } from 'vitest';
import { readSubmission } from './read-submission.js';

const message = (headers: string, body = 'Hello.\r\n') => Readable.from([Buffer.from(`${headers.trim().replace(/\n/g, '\r\n')}\r\n\r\n${body}`)]);

describe('readSubmission', () => {
  test('To and Cc keep the envelope recipients they name; the rest of the envelope is Bcc; header-only addresses are dropped', async () => {
    const read = await readSubmission(message(`
From: "Acme, Inc." <news@acme.test>
To: Ann <ann@example.org>, outsider@example.org
Cc: bob@example.org
Subject: Hi`), ['ANN@example.org', 'bob@example.org', 'carol@example.org']);
    expect(read).toMatchObject({
      from: '"Acme, Inc." <news@acme.test>',
      to: ['"Ann" <ann@example.org>'],
      cc: ['bob@example.org'],
      bcc: ['carol@example.org'],
      subject: 'Hi',
      text: 'Hello.\n',
    });
  });

  test('custom headers keep their written name and decoded value; those the composition writes, trace and Content-* are not kept', async () => {
    const read = await readSubmission(message(`
Received: from client by relay
DKIM-Signature: v=1; d=acme.test
From: news@acme.test
To: ann@example.org
Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=
X-Order-Id: =?utf-8?q?A-1042_=C3=A9?=
Content-Language: en
MIME-Version: 1.0
Message-ID: <x@acme.test>`), ['ann@example.org']);
    expect(read.subject).toBe('Grüße');
    expect(read.headers).toEqual({ 'X-Order-Id': 'A-1042 é' });
  });

  test('groups are flattened; several From mailboxes are passed on as a list for the edge to refuse', async () => {
    const read = await readSubmission(message(`
From: a@acme.test, b@acme.test
To: Team: ann@example.org, bob@example.org;
Subject: x`), ['ann@example.org', 'bob@example.org']);
    expect(read.to).toEqual(['ann@example.org', 'bob@example.org']);
    expect(read.from).toBe('a@acme.test, b@acme.test');
  });

  test('attachments in base64 with their filename and type; html kept apart from text', async () => {
    const boundary = 'b1';
    const read = await readSubmission(message(`
From: news@acme.test
To: ann@example.org
Subject: files
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary=${boundary}`, [
      `--${boundary}`, 'Content-Type: text/html; charset=utf-8', '', '<p>Hi</p>',
      `--${boundary}`, 'Content-Type: application/pdf; name="a.pdf"', 'Content-Disposition: attachment; filename="a.pdf"', 'Content-Transfer-Encoding: base64', '', Buffer.from('%PDF').toString('base64'),
      `--${boundary}--`, '',
    ].join('\r\n')), ['ann@example.org']);
    expect(read.html).toBe('<p>Hi</p>');
    expect(read.text).toBeUndefined();
    expect(read.attachments).toEqual([{ filename: 'a.pdf', content_type: 'application/pdf', content: Buffer.from('%PDF').toString('base64') }]);
  });
});
