// Bad input at a relay node against the real edge (workerd, PostgreSQL, R2):
// real SMTP clients (nodemailer; Python's smtplib when python3 is installed;
// raw sockets for the bytes a client library will not send) talk to nodes
// started in this process, and every assertion is what a user sees: the SMTP
// replies, and the records and raw bytes of `/api/v1/inbound-emails`.
// Enrolment, plain and STARTTLS mail, DMARC and durability are in
// relay-inbound.test.ts; the API's own bad input is in inbound-api.test.ts.
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { buildProxyV1, buildProxyV2 } from '../relay-node/src/proxy/build-proxy-header.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { openSession, sendMessage, type ConnectOptions, type SendResult } from '../relay-node/test-support/smtp-client.js';
import { openRaw, type RawSmtp } from '../relay-node/test-support/smtp-raw.js';
import { inboundRecords, rawMessage, startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { awayFromWindowEdge, eventually } from './support/wait.js';
import { registerProvenDomain } from './support/domain-ownership.js';

const DOMAIN = 'acme-bad-input.test';
const TO = `support@${DOMAIN}`;
const HOST_NAME = 'mx.relay-test.test';
/** `relay_node.inbound.max_message_size` of the plain node (the setting a node reads; `inbound.*` is the service's own MX). */
const MAX_MESSAGE = 2 * 1024 * 1024;
/** `relay_node.inbound.max_header_size` is left at its default. */
const MAX_HEADER = 262_144;
/** `relay_node.inbound.rate_per_minute` of the node behind the PROXY front. */
const SESSIONS_PER_MINUTE = 5;

let stack: TestStack;
let key: string;
let dns: TestDnsServer;
/** The listener as an MX faces the Internet: no PROXY front, no session limit, 2 MiB messages. */
let plain: RelayNode;
/** Behind a balancer: PROXY headers required from 127.0.0.1 (others are direct clients), 5 sessions per address per minute. */
let proxied: RelayNode;
const stateDirs: string[] = [];
const logs: LogLine[] = [];
const log = collectingLog(logs);

beforeAll(async () => {
  stack = await startTestStack();
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'bad-input');
  ({ token: key } = await tenant.key(['relay:write', 'domains:write', 'inbound:read']));
  await registerProvenDomain(stack, key, DOMAIN);
  dns = await startDnsServer(); // every verdict lookup answers NXDOMAIN at once
  const node = async (name: string, env: Record<string, string>) => {
    const stateDir = mkdtempSync(join(tmpdir(), `relay-${name}-`));
    stateDirs.push(stateDir);
    await enrollNode({ edgeUrl: stack.url, key, name, stateDir });
    return startTestNode({ stack, stateDir, dnsAddress: dns.address, log, hostName: HOST_NAME, env });
  };
  [plain, proxied] = await Promise.all([
    node('mx-plain', { SERVICE_RELAY_NODE_INBOUND_MAX_MESSAGE_SIZE: String(MAX_MESSAGE) }),
    node('mx-proxied', {
      SERVICE_RELAY_NODE_INBOUND_PROXY_PROTOCOL_ENABLED: 'true',
      SERVICE_RELAY_NODE_INBOUND_PROXY_PROTOCOL_TRUSTED: '127.0.0.1',
      SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: String(SESSIONS_PER_MINUTE),
    }),
  ]);
});
afterAll(async () => {
  await Promise.all([plain?.stop(), proxied?.stop()]);
  await dns?.close();
  await stack?.stop();
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

/** A small well-formed message; `headers` go before the blank line. */
const mail = (subject: string, body = `Hello from ${subject}.\r\n`, headers = '') =>
  `From: Ann <ann@sender.example>\r\nTo: <${TO}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@sender.example>\r\n${headers}\r\n${body}`;

const send = (port: number, message: string | Buffer, extra: { from?: string; to?: string | string[]; localAddress?: string } = {}) =>
  sendMessage({ port, from: extra.from ?? 'ann@sender.example', to: extra.to ?? TO, message, localAddress: extra.localAddress });

const accepted = (result: SendResult) => {
  expect(result.error, JSON.stringify(result.error)).toBeUndefined();
  expect(result.response).toMatch(/^250 2\.6\.0 /);
};

/** Waits until a record matching `match` is listed; a refused message is shown absent by a later one arriving (oldest is forwarded first). */
const recordWhere = (match: (record: any) => boolean) =>
  eventually(() => inboundRecords(stack, key), (list) => list.some(match), 20_000).then((list) => list.find(match));
const recordWithSubject = (subject: string) => recordWhere((r) => r.subject === subject);
const recordFrom = (sender: string) => recordWhere((r) => r.sender === sender);

/** The raw download is the node's trace header fields followed by exactly the bytes the client sent. */
async function expectRawAsSent(record: { id: string; size: number }, sent: Buffer): Promise<Buffer> {
  const raw = await rawMessage(stack, key, record.id);
  expect(raw.status).toBe(200);
  expect(raw.headers.get('content-type')).toBe('message/rfc822');
  expect(raw.bytes.length).toBe(record.size);
  const tail = raw.bytes.subarray(raw.bytes.length - sent.length);
  expect(tail.equals(sent), `raw bytes differ from the sent ones at offset ${tail.findIndex((b, i) => b !== sent[i])}`).toBe(true);
  const trace = raw.bytes.subarray(0, raw.bytes.length - sent.length).toString('latin1');
  // Header fields only (folded lines allowed), no blank line: the client's own header block follows.
  expect(trace).toMatch(/^Received: from [^\r\n]*\r\n(?:[ \t][^\r\n]*\r\n|[A-Za-z-]+:[^\r\n]*\r\n)*$/);
  expect(trace).toContain(`Authentication-Results: ${HOST_NAME};`);
  return raw.bytes;
}

/** A TCP connection from 127.0.0.1 (the trusted balancer) that has sent `pieces` as separate segments. */
async function balancerSocket(port: number, pieces: Buffer[]): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1' });
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  for (const [i, piece] of pieces.entries()) {
    if (i > 0) await new Promise((r) => setTimeout(r, 40));
    await new Promise<void>((resolve, reject) => socket.write(piece, (err) => (err ? reject(err) : resolve())));
  }
  return socket;
}

/** Sends one message in a session opened on `options` (a socket, or a port). */
async function sendInSession(options: ConnectOptions, message: string, from = 'ann@sender.example'): Promise<SendResult> {
  const session = await openSession(options);
  try {
    return await session.send({ from, to: TO }, message);
  } finally {
    session.quit();
  }
}

/** Speaks SMTP on a raw session up to the 354 of DATA. */
async function startData(raw: RawSmtp, from: string): Promise<void> {
  expect(await raw.command('EHLO client.test')).toMatch(/^250/);
  expect(await raw.command(`MAIL FROM:<${from}>`)).toMatch(/^250 /);
  expect(await raw.command(`RCPT TO:<${TO}>`)).toMatch(/^250 /);
  expect(await raw.command('DATA')).toMatch(/^354 /);
}

describe('the plain listener (max_message_size 2 MiB, max_header_size 256 KiB)', () => {
  test('a recipient domain nobody registered: 550 5.1.1 at RCPT, nothing stored; beside a served one only the served one is kept', async () => {
    const alone = await send(plain.port, mail('unknown-domain-only'), { to: 'someone@not-registered.test' });
    expect(alone.error).toMatchObject({ responseCode: 550, command: 'RCPT TO' });
    expect(alone.error?.response).toMatch(/^550 5\.1\.1 <someone@not-registered\.test>: recipient domain not-registered\.test is not served here/);

    accepted(await send(plain.port, mail('unknown-domain-mixed'), { to: [TO, 'other@not-registered.test'] }));
    const mixed = await recordWithSubject('unknown-domain-mixed');
    expect(mixed).toMatchObject({ status: 'received', recipients: [TO] });
    const all = await inboundRecords(stack, key);
    expect(all.filter((r) => r.subject === 'unknown-domain-only')).toEqual([]);
    expect(all.flatMap((r) => r.recipients).filter((a: string) => a.endsWith('@not-registered.test'))).toEqual([]);
  });

  test('MAIL FROM with SIZE= over the limit: 552 5.3.4 before any data; the same session then delivers', async () => {
    // nodemailer refuses to send a message larger than the advertised SIZE itself, so this one is spoken by hand.
    const raw = await openRaw(plain.port);
    try {
      expect(await raw.reply()).toMatch(/^220 /);
      expect(await raw.command('EHLO client.test')).toMatch(new RegExp(`^250[- ]SIZE ${MAX_MESSAGE}$`, 'm'));
      expect(await raw.command(`MAIL FROM:<declared@sender.example> SIZE=${MAX_MESSAGE + 1}`)).toMatch(/^552 5\.3\.4 /);
      expect(await raw.command('MAIL FROM:<declared@sender.example> SIZE=200')).toMatch(/^250 /);
      expect(await raw.command(`RCPT TO:<${TO}>`)).toMatch(/^250 /);
      expect(await raw.command('DATA')).toMatch(/^354 /);
      expect(await raw.command(`${mail('size-declared-within')}.`)).toMatch(/^250 2\.6\.0 /);
      expect(await raw.command('QUIT')).toMatch(/^221 /);
    } finally {
      raw.close();
    }
    const record = await recordWithSubject('size-declared-within');
    expect(record).toMatchObject({ status: 'received', sender: 'declared@sender.example' });
    expect((await inboundRecords(stack, key)).filter((r) => r.sender === 'declared@sender.example')).toHaveLength(1);
  });

  test('a message over the limit without SIZE=: 552 5.3.4 after the final dot, nothing stored; the next message on the same connection gets 250', async () => {
    const line = `${'x'.repeat(76)}\r\n`;
    const oversize = mail('oversize', line.repeat(Math.ceil((MAX_MESSAGE + 65_536) / line.length)));
    const session = await openSession({ port: plain.port });
    try {
      const refused = await session.send({ from: 'oversize@sender.example', to: TO }, oversize);
      expect(refused.error).toMatchObject({ responseCode: 552, command: 'DATA' });
      expect(refused.error?.response).toMatch(new RegExp(`^552 5\\.3\\.4 Message exceeds the fixed maximum message size of ${MAX_MESSAGE} bytes`));
      accepted(await session.send({ from: 'ann@sender.example', to: TO }, mail('after-oversize')));
    } finally {
      session.quit();
    }
    await recordWithSubject('after-oversize');
    const all = await inboundRecords(stack, key);
    expect(all.filter((r) => r.sender === 'oversize@sender.example' || r.subject === 'oversize')).toEqual([]);
  });

  test('malformed MIME (a part header that never ends, past the parser\'s 1 MB): stored as failed, raw downloadable byte for byte', async () => {
    // mailparser reads some broken structure leniently (no closing delimiter, bad
    // base64 come out `received`); what it refuses is `failed`, and so is a
    // multipart without a boundary or whose boundary never occurs
    // (relay-forward-limits.test.ts).
    const runOn = Array.from({ length: 15_000 }, (_, i) => `X-Run-On-${i}: ${'r'.repeat(64)}\r\n`).join('');
    const sent = Buffer.from(mail('malformed-mime', `--b\r\nContent-Type: text/plain\r\n${runOn}--b--\r\n`, 'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n'));
    expect(sent.length).toBeGreaterThan(1024 * 1024);
    accepted(await send(plain.port, sent, { from: 'malformed@sender.example' }));

    const record = await recordFrom('malformed@sender.example');
    expect(record).toMatchObject({
      status: 'failed', status_reason: 'Max header size for a MIME node exceeded', has_raw: true, recipients: [TO],
      // Nothing of a message the parser refused is read into the record.
      subject: '', message_id: null, text_body: '', html_body: '', attachments: [],
    });
    await expectRawAsSent(record, sent);

    // Structure that is merely broken (no closing delimiter) is read as far as it goes.
    const unterminated = mail('unterminated-multipart', '--b\r\nContent-Type: text/plain\r\n\r\nStill readable.\r\n', 'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n');
    accepted(await send(plain.port, unterminated));
    expect(await recordWithSubject('unterminated-multipart')).toMatchObject({ status: 'received', text_body: 'Still readable.\n' });
  });

  test('8-bit header bytes: UTF-8 is read as written; Latin-1 bytes become U+FFFD in the record and stay intact in the raw message', async () => {
    const utf8 = Buffer.from(mail('Grüße aus Köln — café ✓', 'Hallo.\r\n', 'X-Note: naïve\r\n').replace('From: Ann', 'From: Zoë'), 'utf8');
    accepted(await send(plain.port, utf8, { from: 'utf8@sender.example' }));
    const latin1 = Buffer.concat([
      Buffer.from('From: Ren\xe9 <rene@sender.example>\r\nTo: <' + TO + '>\r\nSubject: Caf\xe9 cr\xe8me br\xfbl\xe9e\r\n', 'latin1'),
      Buffer.from('X-Encoded: =?ISO-8859-1?Q?cr=E8me_br=FBl=E9e?=\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=iso-8859-1\r\n\r\n', 'latin1'),
      Buffer.from('Cr\xe8me br\xfbl\xe9e.\r\n', 'latin1'),
    ]);
    accepted(await send(plain.port, latin1, { from: 'latin1@sender.example' }));

    const utf8Record = await recordFrom('utf8@sender.example');
    expect(utf8Record).toMatchObject({ status: 'received', subject: 'Grüße aus Köln — café ✓', text_body: 'Hallo.\n' });
    expect(utf8Record.headers).toMatchObject({ from: 'Zoë <ann@sender.example>', 'x-note': 'naïve' });
    await expectRawAsSent(utf8Record, utf8);

    // Raw 8-bit header bytes are read as UTF-8 (RFC 6532), so each Latin-1
    // byte is one U+FFFD; the ASCII around them stays readable, an RFC 2047
    // encoded word in the same charset decodes exactly, and so does the body,
    // whose charset is declared.
    const latin1Record = await recordFrom('latin1@sender.example');
    expect(latin1Record).toMatchObject({ status: 'received', subject: 'Caf\ufffd cr\ufffdme br\ufffdl\ufffde', text_body: 'Crème brûlée.\n' });
    expect(latin1Record.headers).toMatchObject({ from: 'Ren\ufffd <rene@sender.example>', 'x-encoded': 'crème brûlée' });
    await expectRawAsSent(latin1Record, latin1);
  });

  test('a 1,000-part MIME bomb is stored as failed with its raw bytes; the node answers the next session', async () => {
    const parts = Array.from({ length: 1000 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\npart ${i}\r\n`).join('');
    const bomb = Buffer.from(mail('mime-bomb', `${parts}--b--\r\n`, 'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n'));
    accepted(await send(plain.port, bomb, { from: 'bomb@sender.example' }));
    accepted(await send(plain.port, mail('after-mime-bomb')));

    const record = await recordFrom('bomb@sender.example');
    expect(record).toMatchObject({ status: 'failed', status_reason: 'Max allowed child nodes exceeded', has_raw: true, subject: '', attachments: [] });
    await expectRawAsSent(record, bomb);
    expect(await recordWithSubject('after-mime-bomb')).toMatchObject({ status: 'received' });
  });

  test('a megabyte header is refused with 552 5.3.4 after the dot, nothing stored; the same connection and the next session both get 250', async () => {
    const folded = Array.from({ length: 14_000 }, () => `\t${'h'.repeat(72)}`).join('\r\n');
    const bigHeader = mail('megabyte-header', 'Body.\r\n', `X-Filler: start\r\n${folded}\r\n`);
    expect(bigHeader.length).toBeGreaterThan(1024 * 1024);
    const session = await openSession({ port: plain.port });
    try {
      const refused = await session.send({ from: 'bigheader@sender.example', to: TO }, bigHeader);
      expect(refused.error).toMatchObject({ responseCode: 552, command: 'DATA' });
      expect(refused.error?.response).toBe(`552 5.3.4 Message header exceeds the maximum header size of ${MAX_HEADER} bytes`);
      accepted(await session.send({ from: 'ann@sender.example', to: TO }, mail('after-big-header-same-session')));
    } finally {
      session.quit();
    }
    accepted(await send(plain.port, mail('after-big-header-next-session')));

    await recordWithSubject('after-big-header-next-session');
    const all = await inboundRecords(stack, key);
    expect(all.filter((r) => r.subject === 'after-big-header-same-session')).toHaveLength(1);
    expect(all.filter((r) => r.sender === 'bigheader@sender.example' || r.subject === 'megabyte-header')).toEqual([]);
  });

  test('an 8-bit local part without SMTPUTF8: 553 5.6.7 at MAIL FROM and at RCPT TO (RFC 6531); with SMTPUTF8 it is taken', async () => {
    const raw = await openRaw(plain.port);
    try {
      expect(await raw.reply()).toMatch(/^220 /);
      expect(await raw.command('EHLO client.test')).toMatch(/SMTPUTF8/);
      expect(await raw.command('MAIL FROM:<jörg@sender.example>')).toMatch(/^553 5\.6\.7 <j.+rg@sender\.example>: a non-ASCII local part needs MAIL FROM with the SMTPUTF8 parameter \(RFC 6531\)$/);
      expect(await raw.command('MAIL FROM:<ann@sender.example>')).toMatch(/^250 /);
      expect(await raw.command(`RCPT TO:<jörg@${DOMAIN}>`)).toMatch(/^553 5\.6\.7 /);
      expect(await raw.command('RSET')).toMatch(/^250 /);
      expect(await raw.command('MAIL FROM:<jörg@sender.example> SMTPUTF8')).toMatch(/^250 /);
      expect(await raw.command(`RCPT TO:<jörg@${DOMAIN}>`)).toMatch(/^250 /);
    } finally {
      raw.close();
    }
  });

  test.each([
    ['<LF>.<CRLF>', '\n.\r\n', 'lf'],
    ['<CR>.<CR><LF>', '\r.\r\n', 'cr'],
  ])('smuggling with %s inside DATA: one message stored, normalised to CRLF, the smuggled commands kept as its text', async (_name, fakeEnd, tag) => {
    const smuggled = `MAIL FROM:<evil@attacker.example>\r\nRCPT TO:<${TO}>\r\nDATA\r\nFrom: <ceo@${DOMAIN}>\r\nSubject: smuggled-${tag}\r\n\r\nPay this.\r\n`;
    const raw = await openRaw(plain.port);
    try {
      expect(await raw.reply()).toMatch(/^220 /);
      await startData(raw, 'ann@sender.example');
      raw.write(`${mail(`smuggle-${tag}`, `Before.${fakeEnd}${smuggled}`)}.\r\n`);
      // One reply for the one message; had the node taken the fake end, the
      // smuggled MAIL, RCPT and DATA would each have had a reply before QUIT's.
      expect(await raw.reply()).toMatch(/^250 2\.6\.0 /);
      expect(await raw.command('QUIT')).toMatch(/^221 /);
    } finally {
      raw.close();
    }

    const record = await recordWithSubject(`smuggle-${tag}`);
    const all = await inboundRecords(stack, key);
    expect(all.filter((r) => r.subject === `smuggle-${tag}`)).toHaveLength(1);
    expect(all.filter((r) => r.subject === `smuggled-${tag}` || r.sender === 'evil@attacker.example')).toEqual([]);
    const stored = (await rawMessage(stack, key, record.id)).bytes.toString('latin1');
    expect(stored.replace(/\r\n/g, '')).not.toMatch(/[\r\n]/); // no bare CR or LF left
    expect(stored.endsWith(mail(`smuggle-${tag}`, `Before.\r\n.\r\n${smuggled}`))).toBe(true);
    expect(record.text_body).toBe(`Before.\n.\n${smuggled.replace(/\r\n/g, '\n')}`);
  });

  const python3 = spawnSync('python3', ['-c', 'import smtplib, ssl'], { stdio: 'ignore' }).status === 0;
  test('Python smtplib (python3) sends over STARTTLS and the message is stored', async (context) => {
    if (!python3) return context.skip('python3 is not on PATH: the smtplib client was not tried');
    const script = [
      'import smtplib, sys',
      'from email.message import EmailMessage',
      'm = EmailMessage()',
      'm["From"] = "Py <py@sender.example>"; m["To"] = sys.argv[2]; m["Subject"] = "python-smtplib"',
      'm["Message-ID"] = "<python-smtplib@sender.example>"',
      'm.set_content("Sent by smtplib over STARTTLS.")',
      's = smtplib.SMTP("127.0.0.1", int(sys.argv[1]), local_hostname="py.sender.example", timeout=15)',
      's.starttls(); s.ehlo(); refused = s.send_message(m); s.quit()',
      'print("refused", refused)',
    ].join('\n');
    const { stdout } = await promisify(execFile)('python3', ['-c', script, String(plain.port), TO], { timeout: 20_000 });
    expect(stdout.trim()).toBe('refused {}');
    const record = await recordWithSubject('python-smtplib');
    expect(record).toMatchObject({ status: 'received', sender: 'py@sender.example', message_id: '<python-smtplib@sender.example>', text_body: 'Sent by smtplib over STARTTLS.\n' });
    expect(record.headers.received).toMatch(/^from py\.sender\.example \(\[127\.0\.0\.1\]\).* with ESMTPS \(TLSv1\.[23] /);
  });

  test('nothing is left in the node\'s spool: refused messages never reached it, stored ones left once the edge took them', async () => {
    const files = () => readdirSync(plain.spoolDir, { withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name);
    expect(await eventually(async () => files(), (names) => names.length === 0, 10_000)).toEqual([]);
    expect(existsSync(join(plain.spoolDir, 'dead'))).toBe(false);
  });
});

describe('behind the PROXY front (trusted: 127.0.0.1; 5 sessions per address per minute)', () => {
  test('an untrusted peer is never asked for a header: its PROXY line is an unknown command (500) and its own address stays the client', async () => {
    const raw = await openRaw(proxied.port, { localAddress: '127.0.0.2' });
    try {
      expect(await raw.reply()).toMatch(/^220 /);
      expect(await raw.command('PROXY TCP4 203.0.113.66 127.0.0.1 40000 25')).toMatch(/^500 /);
      await startData(raw, 'ann@sender.example');
      expect(await raw.command(`${mail('untrusted-proxy-line')}.`)).toMatch(/^250 2\.6\.0 /);
    } finally {
      raw.close();
    }
    const record = await recordWithSubject('untrusted-proxy-line');
    expect(record.auth.client_ip).toBe('127.0.0.2');
    expect(record.headers.received).toContain('[127.0.0.2]');
  });

  test('a trusted peer that sends no header is dropped without a greeting: a silent one at the header timeout, one talking SMTP at once', async () => {
    logs.length = 0;
    // What a client connecting straight to a port meant for the balancer hears: nothing, then the close.
    const heardBeforeClose = (speak?: string) => new Promise<{ heard: string; ms: number }>((resolve, reject) => {
      const started = Date.now();
      const socket = connect({ port: proxied.port, host: '127.0.0.1' }, () => speak && socket.write(speak));
      let heard = '';
      socket.on('data', (chunk) => (heard += chunk.toString('latin1')));
      socket.on('error', reject);
      socket.on('close', () => resolve({ heard, ms: Date.now() - started }));
    });
    const [silent, talker] = await Promise.all([heardBeforeClose(), heardBeforeClose('EHLO client.test\r\n')]);
    expect(talker).toMatchObject({ heard: '' });
    expect(talker.ms).toBeLessThan(2_000);
    expect(silent).toMatchObject({ heard: '' });
    expect(silent.ms).toBeGreaterThanOrEqual(4_500); // the front's 5 s header timeout
    const drops = logs.filter((l) => l.message === 'PROXY header missing or malformed; connection dropped').map((l) => l.fields?.reason);
    expect(drops.sort()).toEqual(['invalid', 'timeout']);
    // The listener goes on serving.
    accepted(await send(proxied.port, mail('after-trusted-no-header'), { localAddress: '127.0.0.2' }));
    await recordWithSubject('after-trusted-no-header');
  });

  const tcp = (source: string, sourcePort = 40_000) => ({ source, destination: source.includes(':') ? '::1' : '127.0.0.1', sourcePort, destinationPort: 25 });
  const split = (header: Buffer, ...at: number[]) => [0, ...at].map((from, i) => header.subarray(from, [...at, header.length][i]));
  test.each([
    { header: 'v1 TCP4', pieces: [buildProxyV1(tcp('203.0.113.7'))], clientIp: '203.0.113.7' },
    { header: 'v1 TCP6', pieces: [buildProxyV1(tcp('2001:db8::7'))], clientIp: '2001:db8::7' },
    { header: 'v2 IPv4', pieces: [buildProxyV2({ command: 'proxy', endpoints: tcp('198.51.100.9') })], clientIp: '198.51.100.9' },
    { header: 'v2 IPv6', pieces: [buildProxyV2({ command: 'proxy', endpoints: tcp('2001:db8:0:0:0:0:0:9') })], clientIp: '2001:db8::9' },
    { header: 'v2 LOCAL (health check)', pieces: [buildProxyV2({ command: 'local' })], clientIp: '127.0.0.1' },
    { header: 'v1 in two TCP segments', pieces: split(buildProxyV1(tcp('192.0.2.41')), 9), clientIp: '192.0.2.41' },
    { header: 'v2 in three TCP segments', pieces: split(buildProxyV2({ command: 'proxy', endpoints: tcp('192.0.2.42') }), 5, 17), clientIp: '192.0.2.42' },
  ])('a trusted peer\'s $header header: the record\'s client_ip is $clientIp', async ({ header, pieces, clientIp }) => {
    const subject = `proxy-${header.replace(/\W+/g, '-')}`;
    const socket = await balancerSocket(proxied.port, pieces);
    accepted(await sendInSession({ port: proxied.port, connection: socket }, mail(subject)));
    const record = await recordWithSubject(subject);
    expect(record.auth.client_ip).toBe(clientIp);
    // The trace header names the same client, as an RFC 5321 address literal.
    expect(record.headers.received).toContain(`from client.test ([${clientIp.includes(':') ? 'IPv6:' : ''}${clientIp}])`);
  });

  test('a session flood from one address gets 421 4.7.0 past the limit, before the greeting; another address still gets in', async () => {
    await awayFromWindowEdge(5_000);
    for (let i = 0; i < SESSIONS_PER_MINUTE; i++) {
      const raw = await openRaw(proxied.port, { localAddress: '127.0.0.4' });
      expect(await raw.reply()).toMatch(/^220 /);
      raw.close();
    }
    const flooded = await send(proxied.port, mail('flooded'), { localAddress: '127.0.0.4' });
    expect(flooded.error?.response).toMatch(/^421 4\.7\.0 /);
    accepted(await send(proxied.port, mail('flood-other-address'), { localAddress: '127.0.0.3' }));
    expect((await recordWithSubject('flood-other-address')).auth.client_ip).toBe('127.0.0.3');
    expect((await inboundRecords(stack, key)).filter((r) => r.subject === 'flooded')).toEqual([]);
  });
});
