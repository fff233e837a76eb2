// International domain names end to end (issue 13, item 7): mail to
// `user@bücher.test` over real SMTP (SMTPUTF8, as the listener offers it) to a
// node enrolled at the real edge, stored for the project that registered the
// A-label `xn--bcher-kva.test`. smtp-server hands every recipient over as a
// U-label (it decodes `xn--` itself), so without the node's normalisation the
// edge finds no project and drops the message.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { openRaw } from '../relay-node/test-support/smtp-raw.js';
import { proveOwnership } from './support/domain-ownership.js';
import { inboundRecords, rawMessage, startTestNode } from './support/relay-node.js';
import { metaOfForward } from './support/relay.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const A_LABEL = 'xn--bcher-kva.test';
const U_LABEL = 'bücher.test';

let stack: TestStack;
let key: string;
let dns: TestDnsServer;
let node: RelayNode;
let stateDir: string;
/** The `meta` part of every forward the node made, as it went over the wire to the edge. */
const forwardedMeta: Record<string, any>[] = [];
const logs: LogLine[] = [];

/** Real fetch, reading the meta of each inbound forward on its way past. */
const recordingFetch: typeof fetch = async (input, init) => {
  const meta = await metaOfForward(input, init);
  if (meta) forwardedMeta.push(meta);
  return fetch(input, init);
};

beforeAll(async () => {
  stack = await startTestStack();
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'buecher');
  ({ token: key } = await tenant.key(['relay:write', 'domains:write', 'domains:read', 'inbound:read']));
  // The domains route keeps one spelling per name: the A-label. Unicode is refused, not converted.
  const unicode = await stack.call('POST', '/api/v1/domains', { token: key, body: { name: U_LABEL } });
  expect(unicode.status).toBe(400);
  expect(unicode.body.fields.name).toMatch(/punycode/);
  const created = await stack.call('POST', '/api/v1/domains', { token: key, body: { name: A_LABEL } });
  expect(created.status).toBe(201);
  expect(created.body.domain.name).toBe(A_LABEL);
  // Mail is accepted once ownership is proven in DNS (domain-ownership.test.ts proves it for real).
  await proveOwnership(stack, created.body.domain.id);

  dns = await startDnsServer();
  stateDir = mkdtempSync(join(tmpdir(), 'relay-idn-'));
  await enrollNode({ edgeUrl: stack.url, key, name: 'mx-idn', stateDir });
  node = await startTestNode({ stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), outbound: false, fetch: recordingFetch });
});
afterAll(async () => {
  await node?.stop();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const mail = (subject: string, to: string) =>
  `From: Ann <ann@sender.example>\r\nTo: <${to}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@sender.example>\r\n\r\nHello from ${subject}.\r\n`;

const recordWithSubject = (subject: string) =>
  eventually(() => inboundRecords(stack, key), (list) => list.some((r) => r.subject === subject), 20_000)
    .then((list) => list.find((r) => r.subject === subject));

describe('mail to an internationalised domain', () => {
  test('user@bücher.test over SMTPUTF8 is stored for the project of xn--bcher-kva.test, A-labels all the way', async () => {
    const result = await sendMessage({ port: node.port, from: 'ann@sender.example', to: `user@${U_LABEL}`, message: mail('umlaut', `user@${U_LABEL}`) });
    expect(result.error, JSON.stringify(result.error)).toBeUndefined();
    expect(result.response).toMatch(/^250 2\.6\.0 /);

    const record = await recordWithSubject('umlaut');
    expect(record.recipients).toEqual([`user@${A_LABEL}`]);
    expect(record.domain_id).not.toBeNull();
    expect(forwardedMeta.find((m) => m.parsed?.subject === 'umlaut')?.rcpt_to).toEqual([`user@${A_LABEL}`]);
    // The node's trace names the recipient as stored (a U-label would be written as `b?cher`).
    const raw = (await rawMessage(stack, key, record.id)).bytes.toString('latin1');
    expect(raw).toContain(`\tfor <user@${A_LABEL}>;`);
  });

  test('the A-label and upper case in RCPT (plain ASCII, no SMTPUTF8) land the same way', async () => {
    const result = await sendMessage({ port: node.port, from: 'ann@sender.example', to: 'Info@XN--BCHER-KVA.TEST', message: mail('ascii', 'info@xn--bcher-kva.test') });
    expect(result.response).toMatch(/^250 2\.6\.0 /);
    const record = await recordWithSubject('ascii');
    // The local part keeps its case (it is the receiving system's to judge); the domain is the stored name.
    expect(record.recipients).toEqual([`Info@${A_LABEL}`]);
  });

  test('one address written both ways in one transaction is one recipient', async () => {
    const smtp = await openRaw(node.port);
    expect(await smtp.reply()).toMatch(/^220 /);
    expect(await smtp.command('EHLO client.test')).toMatch(/SMTPUTF8/);
    expect(await smtp.command('MAIL FROM:<ann@sender.example> SMTPUTF8')).toMatch(/^250 /);
    expect(await smtp.command(`RCPT TO:<both@${U_LABEL}>`)).toMatch(/^250 /);
    expect(await smtp.command(`RCPT TO:<both@${A_LABEL}>`)).toMatch(/^250 /);
    expect(await smtp.command('DATA')).toMatch(/^354 /);
    smtp.write(Buffer.from(`${mail('twice', `both@${A_LABEL}`)}.\r\n`, 'utf8'));
    expect(await smtp.reply()).toMatch(/^250 2\.6\.0 /);
    smtp.close();
    const record = await recordWithSubject('twice');
    expect(record.recipients).toEqual([`both@${A_LABEL}`]);
  });

  test('a domain that is not registered is still refused at RCPT, named as the edge would store it', async () => {
    const result = await sendMessage({ port: node.port, from: 'ann@sender.example', to: 'user@bücherei.test', message: mail('elsewhere', 'user@bücherei.test') });
    expect(result.error?.response).toBe('550 5.1.1 <user@bücherei.test>: recipient domain xn--bcherei-n2a.test is not served here');
  });
});
