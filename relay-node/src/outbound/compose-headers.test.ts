// One From, built by us (issue 13 item 3), on the node's side: every address
// entry of a job is composed from exactly one parsed mailbox (a list or group
// is refused, never passed on as text), and the DKIM signature oversigns the
// headers that occur once, so a From (or Reply-To, Subject) added in transit
// breaks it. Verified by mailauth's own verifier, key from a real DNS server.
import { authenticate, dkimSign, type DKIMSignOptions } from 'mailauth';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../test-support/dns-server.js';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import { AddressRefusedError, composeMessage, composeSignedMessage } from './compose.js';
import { makeDkimKey, makeJob } from '../../test-support/jobs.js';

const key = makeDkimKey('rsa');
let dns: TestDnsServer;

beforeAll(async () => {
  dns = await startDnsServer({ [key.name]: { TXT: [key.record] } });
});
afterAll(async () => { await dns?.close(); });

/** mailauth's verdict on the signatures of `bytes`, as a receiver reaches it. */
async function dkimResults(bytes: Buffer | string): Promise<string[]> {
  const verdict = await authenticate(Buffer.from(bytes), {
    ip: '127.0.0.1', helo: 'relay.acme.test', sender: 'news@acme.test', mta: 'mx.test',
    resolver: createDnsResolver([dns.address], { cache: false }), disableArc: true, disableBimi: true,
  });
  return (verdict.dkim.results ?? []).map((r) => `${r.signingDomain}:${r.status.result}`);
}

/** `bytes` with `line` put in right below the DKIM-Signature header (its folded lines included), as a hop in transit would. */
function addedBelowSignature(bytes: Buffer, line: string): string {
  const text = bytes.toString('latin1');
  const end = text.search(/\r\n(?![ \t])/); // end of the (folded) signature header
  return `${text.slice(0, end + 2)}${line}\r\n${text.slice(end + 2)}`;
}
/** `bytes` with `line` added as the last header. */
const addedAtEndOfHeaders = (bytes: Buffer, line: string) => bytes.toString('latin1').replace('\r\n\r\n', `\r\n${line}\r\n\r\n`);

const signedH = (bytes: Buffer) => {
  const signature = bytes.toString('latin1').split(/\r\n(?![ \t])/)[0]!.replace(/\r\n[ \t]+/g, ' ');
  return /h=([^;]+);/.exec(signature)![1]!.replace(/\s+/g, '').toLowerCase().split(':');
};

describe('address headers are composed from one parsed mailbox per entry', () => {
  test.each([
    ['from', { from: 'ceo@bank.example, Foo <news@acme.test>' }, 'from'],
    ['from', { from: 'ceo@bank.example; news@acme.test' }, 'from'],
    ['from', { from: 'Board: ceo@bank.example, news@acme.test;' }, 'from'],
    ['to', { to: ['ann@dest.test', 'x@dest.test, y@dest.test'] }, 'to.1'],
    ['cc', { cc: ['undisclosed-recipients:;'] }, 'cc.0'],
    ['reply_to', { reply_to: ['a@acme.test; b@evil.test'] }, 'reply_to.0'],
  ])('a list or group in %s is refused, nothing is composed (%j)', async (_field, message, named) => {
    const job = makeJob('ann@dest.test', { message });
    const refused = await composeMessage(job.message).then(() => null, (e: unknown) => e);
    expect(refused).toBeInstanceOf(AddressRefusedError);
    expect((refused as AddressRefusedError).field).toBe(named);
  });

  test('the edge\'s composed forms come out as exactly one mailbox each, name quoted or encoded by the composer', async () => {
    const job = makeJob('ann@dest.test', {
      message: {
        from: '"ceo@bank.example, Foo" <news@acme.test>',
        to: ['"Q \\"x\\" \\\\ R" <ann@dest.test>', 'Jörg Müller <joerg@dest.test>'],
        cc: ['"J. Smith" <j@dest.test>'],
        reply_to: ['support@acme.test'],
      },
    });
    const bytes = await composeMessage(job.message);
    const parsed = await simpleParser(bytes);
    expect(parsed.from?.value).toEqual([{ name: 'ceo@bank.example, Foo', address: 'news@acme.test' }]);
    const to = Array.isArray(parsed.to) ? parsed.to.flatMap((a) => a.value) : parsed.to!.value;
    expect(to).toEqual([{ name: 'Q "x" \\ R', address: 'ann@dest.test' }, { name: 'Jörg Müller', address: 'joerg@dest.test' }]);
    expect((parsed.cc as { value: unknown[] }).value).toEqual([{ name: 'J. Smith', address: 'j@dest.test' }]);
    const text = bytes.toString('latin1').replace(/\r\n[ \t]+/g, ' '); // unfolded
    // The name is one quoted string, the non-ASCII one an encoded word: never a bare comma in From.
    expect(text).toMatch(/^From: "ceo@bank\.example, Foo" <news@acme\.test>\r$/m);
    expect(text).toMatch(/^To: .*=\?UTF-8\?Q\?J=C3=B6rg_M=C3=BCller\?= <joerg@dest\.test>/m);
    expect(text.match(/^From:/gim)).toHaveLength(1);
  });
});

describe('DKIM oversigns the headers that occur once', () => {
  test('h= lists From once more than it occurs, and Reply-To and Cc though absent', async () => {
    const job = makeJob('ann@dest.test', { dkim: key.dkim, message: { headers: { 'X-Campaign': 'autumn' } } });
    const bytes = await composeSignedMessage(job, { signTime: new Date() });
    const h = signedH(bytes);
    expect(h.filter((n) => n === 'from')).toHaveLength(2);
    expect(h.filter((n) => n === 'to')).toHaveLength(2);
    expect(h.filter((n) => n === 'subject')).toHaveLength(2);
    expect(h.filter((n) => n === 'reply-to')).toHaveLength(1);
    expect(h.filter((n) => n === 'cc')).toHaveLength(1);
    expect(h.filter((n) => n === 'x-campaign')).toHaveLength(1);
    expect(await dkimResults(bytes)).toEqual(['acme.test:pass']);
  });

  test.each([
    ['a second From below the signature', (b: Buffer) => addedBelowSignature(b, 'From: ceo@bank.example')],
    ['a second From at the end of the headers', (b: Buffer) => addedAtEndOfHeaders(b, 'From: ceo@bank.example')],
    ['a Reply-To the message never had', (b: Buffer) => addedBelowSignature(b, 'Reply-To: thief@evil.test')],
    ['a second Subject', (b: Buffer) => addedAtEndOfHeaders(b, 'Subject: Urgent: wire the money')],
  ])('%s breaks the signature', async (_name, tamper) => {
    const job = makeJob('ann@dest.test', { dkim: key.dkim });
    const bytes = await composeSignedMessage(job, { signTime: new Date() });
    expect(await dkimResults(bytes)).toEqual(['acme.test:pass']);
    expect(await dkimResults(tamper(bytes))).toEqual(['acme.test:fail']);
  });

  test('a header no signature covers (a trace header a hop adds) still verifies', async () => {
    const job = makeJob('ann@dest.test', { dkim: key.dkim });
    const bytes = await composeSignedMessage(job, { signTime: new Date() });
    expect(await dkimResults(addedBelowSignature(bytes, 'Received: from relay.acme.test by mx.dest.test'))).toEqual(['acme.test:pass']);
  });

  test('without oversigning (mailauth\'s dkimSign as is) the added From rides on a passing signature: the attack this stops', async () => {
    const job = makeJob('ann@dest.test');
    const bytes = await composeMessage(job.message);
    const plain = await dkimSign(bytes, {
      canonicalization: 'relaxed/relaxed', headerList: 'from:to:subject:date:message-id', signTime: new Date(),
      signatureData: [{ signingDomain: key.dkim.domain, selector: key.dkim.selector, privateKey: key.dkim.private_key_pem, algorithm: 'rsa-sha256', canonicalization: 'relaxed/relaxed' }],
    } as unknown as DKIMSignOptions);
    const signed = Buffer.concat([Buffer.from(plain.signatures), bytes]);
    expect(await dkimResults(addedBelowSignature(signed, 'From: ceo@bank.example'))).toEqual(['acme.test:pass']);
  });
});
