// What a relay node forwards when a message does not fit the edge's limits,
// or its MIME tree cannot be read (issue 13, items 6 and 9), through real
// SMTP sessions, the real node and the real edge: a message answered 250 is
// stored (as `failed`, with its raw bytes and the reason), never dead-lettered.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { sendMessage, type SendResult } from '../relay-node/test-support/smtp-client.js';
import { openRaw } from '../relay-node/test-support/smtp-raw.js';
import { registerDomain } from './support/relay.js';
import { inboundRecords, rawMessage, startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const DOMAIN = 'acme-forward-limits.test';
const TO = `support@${DOMAIN}`;
/** The edge's `inbound.max_message_size`: it takes bodies up to 1,648,576 bytes, a meta up to 1,348,576. */
const EDGE_MAX = 300_000;
const BODY_LIMIT = 2 * EDGE_MAX + 1_048_576;
const META_LIMIT = EDGE_MAX + 1_048_576;

let stack: TestStack;
let key: string;
let dns: TestDnsServer;
/** Sized like the edge: it knows before uploading what the edge will refuse. */
let sized: RelayNode;
/** Believes the edge takes 4 MB messages (its relay_node.inbound.max_message_size): it learns from the edge's 413. */
let optimist: RelayNode;
const stateDirs: string[] = [];
const logs: LogLine[] = [];

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_INBOUND_MAX_MESSAGE_SIZE: String(EDGE_MAX) } });
  const tenant = await seedProject(stack, await platformToken(stack), 'forward-limits');
  ({ token: key } = await tenant.key(['relay:write', 'inbound:read']));
  await registerDomain(stack, tenant.project.id, DOMAIN);
  dns = await startDnsServer();
  const node = async (name: string, maxMessage: number) => {
    const stateDir = mkdtempSync(join(tmpdir(), `relay-${name}-`));
    stateDirs.push(stateDir);
    await enrollNode({ edgeUrl: stack.url, key, name, stateDir });
    return startTestNode({ stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), outbound: false, env: { SERVICE_RELAY_NODE_INBOUND_MAX_MESSAGE_SIZE: String(maxMessage) } });
  };
  [sized, optimist] = await Promise.all([node('mx-sized', EDGE_MAX), node('mx-optimist', 4_000_000)]);
});
afterAll(async () => {
  await Promise.all([sized?.stop(), optimist?.stop()]);
  await dns?.close();
  await stack?.stop();
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

/** A text/plain message whose body is `line` repeated over `lines` lines. */
const plainText = (from: string, line: string, lines: number) => Buffer.from(
  `From: <${from}>\r\nTo: <${TO}>\r\nSubject: big text\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=us-ascii\r\n\r\n${`${line}\r\n`.repeat(lines)}`,
  'latin1',
);

const accepted = (result: SendResult) => {
  expect(result.error, JSON.stringify(result.error)).toBeUndefined();
  expect(result.response).toMatch(/^250 2\.6\.0 /);
};

const recordFrom = (sender: string) =>
  eventually(() => inboundRecords(stack, key), (list) => list.some((r) => r.sender === sender), 30_000).then((list) => list.find((r) => r.sender === sender));

/** The raw download ends with exactly the bytes the client sent (the node's trace fields come first). */
async function expectRawAsSent(record: { id: string; size: number }, sent: Buffer) {
  const raw = await rawMessage(stack, key, record.id);
  expect(raw.status).toBe(200);
  expect(raw.bytes.length).toBe(record.size);
  expect(raw.bytes.subarray(raw.bytes.length - sent.length).equals(sent)).toBe(true);
}

/** Nothing in the node's dead/ folder. */
const deadLetters = (node: RelayNode) => (existsSync(join(node.spoolDir, 'dead')) ? readdirSync(join(node.spoolDir, 'dead')) : []);

describe('a message too large to forward with its parsed parts (item 6)', () => {
  test('is sized before the upload and sent as its raw bytes alone: stored failed, naming why, raw downloadable, nothing dead-lettered', async () => {
    // 280 kB of control characters, each six bytes once JSON-escaped (\u001f): its text alone is over the meta limit.
    const sent = plainText('escaped@sender.example', '\x1f'.repeat(70), 4000);
    expect(sent.length).toBeLessThan(EDGE_MAX);
    accepted(await sendMessage({ port: sized.port, from: 'escaped@sender.example', to: TO, message: sent }));
    const record = await recordFrom('escaped@sender.example');
    expect(record).toMatchObject({ status: 'failed', has_raw: true, recipients: [TO], subject: '', text_body: '', attachments: [] });
    expect(record.status_reason).toMatch(new RegExp(`^too large to forward parsed: its parsed text and headers take \\d+ bytes, over the edge's ${META_LIMIT}; only the raw message is kept$`));
    await expectRawAsSent(record, sent);
    expect(deadLetters(sized)).toEqual([]);
  });

  test('a 413 from an edge whose limit is below the node\'s makes the node send the raw bytes alone, at once; nothing dead-lettered', async () => {
    // 700 kB of quotes: its meta (each quote escaped) plus the raw message is over the edge's body limit, not the node's.
    const sent = plainText('quotes@sender.example', '"'.repeat(70), 10_000);
    expect(sent.length).toBeGreaterThan(EDGE_MAX);
    accepted(await sendMessage({ port: optimist.port, from: 'quotes@sender.example', to: TO, message: sent }));
    const record = await recordFrom('quotes@sender.example');
    expect(record).toMatchObject({ status: 'failed', has_raw: true, subject: '', text_body: '' });
    expect(record.status_reason).toContain(`too large for the edge with its parsed parts (the edge refused POST /relay/v1/inbound (413): request body larger than ${BODY_LIMIT} bytes)`);
    expect(record.status_reason).toMatch(/; only the raw message is kept$/);
    await expectRawAsSent(record, sent);
    expect(deadLetters(optimist)).toEqual([]);
  });
});

describe('an envelope the SMTP listener took is one the edge takes (item 6)', () => {
  test('a 300-character EHLO name (the edge takes 255): 250, then stored, not dead-lettered', async () => {
    const sender = 'long-ehlo@sender.example';
    const recipient = TO;
    const ehlo = `${'h'.repeat(292)}.example`;
    const raw = await openRaw(sized.port);
    try {
      expect(await raw.reply()).toMatch(/^220 /);
      expect(await raw.command(`EHLO ${ehlo}`)).toMatch(/^250/);
      expect(await raw.command(`MAIL FROM:<${sender}>`)).toMatch(/^250/);
      expect(await raw.command(`RCPT TO:<${recipient}>`)).toMatch(/^250/);
      expect(await raw.command('DATA')).toMatch(/^354/);
      expect(await raw.command(`From: <${sender}>\r\nSubject: odd envelope\r\n\r\nHello.\r\n.`)).toMatch(/^250 2\.6\.0 /);
    } finally {
      raw.close();
    }
    const record = await recordFrom(sender);
    expect(record).toMatchObject({ status: 'received', subject: 'odd envelope', recipients: [recipient] });
    // The name as given stays in the stored message's trace fields.
    expect((await rawMessage(stack, key, record.id)).bytes.toString('latin1')).toContain(`smtp.helo=${ehlo};`);
    expect(deadLetters(sized)).toEqual([]);
  });
});

describe('parsed values the edge would refuse never cost a message (review of issue 13, items 1 and 3)', () => {
  test('a 1,200-character header name, a Message-ID, filename and content type past the edge\'s limits: 250, stored received, raw byte for byte, nothing dead-lettered', async () => {
    const from = 'long-name@sender.example';
    const longName = `X-${'n'.repeat(1_198)}`;
    const sent = Buffer.from([
      `From: <${from}>`, `To: <${TO}>`, 'Subject: long header name', `${longName}: one`, `${longName}: two`,
      `Message-ID: <${'m'.repeat(996)}\u{1F600}@sender.example>`, 'MIME-Version: 1.0', 'Content-Type: multipart/mixed; boundary="b"', '',
      '--b', 'Content-Type: text/plain', '', 'Hello.', '--b',
      `Content-Type: application/x-${'t'.repeat(300)}`, `Content-Disposition: attachment; filename="${'f'.repeat(1_500)}.bin"`, '', 'data', '--b--', '',
    ].join('\r\n'), 'utf8');
    accepted(await sendMessage({ port: sized.port, from, to: TO, message: sent }));
    const record = await recordFrom(from);
    expect(record).toMatchObject({
      status: 'received', subject: 'long header name', text_body: 'Hello.', recipients: [TO],
      message_id: `<${'m'.repeat(996)}`,
      attachments: [expect.objectContaining({ filename: 'f'.repeat(1_000), content_type: `application/x-${'t'.repeat(241)}` })],
    });
    // Left out of the parsed headers (the edge takes names up to 998 characters), kept in the raw message.
    expect(Object.keys(record.headers).filter((name) => name.length > 998)).toEqual([]);
    expect(record.headers.subject).toBe('long header name');
    await expectRawAsSent(record, sent);
    expect(deadLetters(sized)).toEqual([]);
  });

  test('a message that starts with a blank line (no header) keeps a body line claiming our Authentication-Results', async () => {
    const from = 'no-header@sender.example';
    const forged = 'Authentication-Results: mx.relay-test.test; dkim=pass';
    const sent = Buffer.from(`\r\n${forged}\r\nSubject: not a header\r\n`);
    accepted(await sendMessage({ port: sized.port, from, to: TO, message: sent }));
    const record = await recordFrom(from);
    expect(record.status).toBe('received');
    await expectRawAsSent(record, sent);
    expect(deadLetters(sized)).toEqual([]);
  });
});

describe('a MIME tree that cannot be parsed is failed, its raw bytes kept (item 9)', () => {
  const broken = (from: string, contentType: string) => Buffer.from([
    `From: <${from}>`, `To: <${TO}>`, 'Subject: broken tree', 'MIME-Version: 1.0', `Content-Type: ${contentType}`, '',
    '--b', 'Content-Type: text/plain', '', 'This part is never read.', '--b--', '',
  ].join('\r\n'));

  test.each([
    ['a multipart without a boundary parameter', 'noboundary@sender.example', 'multipart/mixed', 'unparseable MIME structure: a multipart/mixed part has no boundary parameter'],
    ['a multipart whose boundary never occurs', 'neveroccurs@sender.example', 'multipart/mixed; boundary="not-in-the-body"', 'unparseable MIME structure: the boundary "not-in-the-body" of a multipart/mixed part never occurs'],
  ])('%s: 250, then stored failed with the defect as status_reason, raw downloadable byte for byte', async (_, from, contentType, reason) => {
    const sent = broken(from, contentType);
    accepted(await sendMessage({ port: sized.port, from, to: TO, message: sent }));
    const record = await recordFrom(from);
    expect(record).toMatchObject({ status: 'failed', status_reason: reason, has_raw: true, subject: '', text_body: '', attachments: [] });
    await expectRawAsSent(record, sent);
  });
});
