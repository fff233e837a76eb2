import { describe, expect, test } from 'vitest';
import { fieldBlocks, parseBounceReport } from './parse-report.js';

const bytes = (text: string) => new TextEncoder().encode(text.replace(/\n/g, '\r\n'));

function dsn(recipientBlock: string, returned = 'Content-Type: text/rfc822-headers\n\nFrom: Acme <news@acme.test>\nMessage-ID: <orig-1@acme.test>\n') {
  return bytes(`From: MAILER-DAEMON@mx.dest.test
To: bounce-x@bounces.mail.test
Subject: Undelivered Mail Returned to Sender
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

Sorry.

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.dest.test

${recipientBlock}

--B
${returned}
--B--
`);
}

function arf(feedbackType: string) {
  return bytes(`From: fbl@isp.test
To: bounce-x@bounces.mail.test
Subject: complaint
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="P"

--P
Content-Type: text/plain

An abuse report.

--P
Content-Type: message/feedback-report

Feedback-Type: ${feedbackType}
User-Agent: Fbl/1.0
Version: 1
Original-Rcpt-To: <ann@isp.test>

--P
Content-Type: message/rfc822
Content-Disposition: inline

From: Acme <news@acme.test>
Message-ID: <orig-2@acme.test>
Subject: Hello

Hi
--P--
`);
}

describe('parseBounceReport', () => {
  test('a failed recipient with 5.1.1: hard, with the folded diagnostic, the remote MTA and the original Message-ID', async () => {
    const verdict = await parseBounceReport(dsn('Final-Recipient: rfc822; gone@dest.test\nAction: failed\nStatus: 5.1.1\nRemote-MTA: dns; inner.dest.test\nDiagnostic-Code: smtp; 550 5.1.1 <gone@dest.test>: Recipient address\n    rejected: User unknown'));
    expect(verdict).toEqual({
      ok: true,
      report: {
        kind: 'dsn', type: 'hard', smtpCode: 550, status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 <gone@dest.test>: Recipient address rejected: User unknown',
        remoteMta: 'inner.dest.test', feedbackType: null, originalMessageId: '<orig-1@acme.test>',
      },
    });
  });

  test.each([
    ['failed with 4.x.x', 'Action: failed\nStatus: 4.4.7\nDiagnostic-Code: smtp; 451 4.4.7 expired', 'soft', '4.4.7'],
    ['delayed', 'Action: delayed\nStatus: 4.2.2\nDiagnostic-Code: smtp; 452 4.2.2 mailbox full', 'soft', '4.2.2'],
    ['failed without a status (the SMTP code decides)', 'Action: failed\nDiagnostic-Code: smtp; 550 no such user', 'hard', null],
  ])('%s', async (_, block, type, status) => {
    const verdict = await parseBounceReport(dsn(`Final-Recipient: rfc822; x@dest.test\n${block}`));
    expect(verdict.ok && [verdict.report.type, verdict.report.status]).toEqual([type, status]);
  });

  test('a delivered or relayed notice is not a bounce', async () => {
    expect(await parseBounceReport(dsn('Final-Recipient: rfc822; x@dest.test\nAction: delivered\nStatus: 2.0.0')))
      .toEqual({ ok: false, problem: 'delivery-status report without a failed or delayed recipient (action delivered)' });
  });

  test('an ARF abuse report is a complaint with its feedback type and the original Message-ID', async () => {
    expect(await parseBounceReport(arf('abuse'))).toEqual({
      ok: true,
      report: { kind: 'arf', type: 'complaint', smtpCode: null, status: null, diagnostic: null, remoteMta: null, feedbackType: 'abuse', originalMessageId: '<orig-2@acme.test>' },
    });
  });

  test('not-spam and auth-failure feedback are not complaints; a plain message is not a report', async () => {
    expect(await parseBounceReport(arf('not-spam'))).toEqual({ ok: false, problem: 'feedback type not-spam is not a complaint' });
    expect((await parseBounceReport(arf('auth-failure'))).ok).toBe(false);
    expect(await parseBounceReport(bytes('From: a@b.test\nSubject: hi\n\nout of office\n'))).toEqual({ ok: false, problem: 'not a delivery-status or feedback report' });
  });
});

test('fieldBlocks: paragraphs of folded fields, names lower case, the first value kept', () => {
  expect(fieldBlocks('A: 1\nB: two\n  lines\n\n\nC: 3\nc: again\n').map((m) => Object.fromEntries(m))).toEqual([{ a: '1', b: 'two lines' }, { c: '3' }]);
});
