// SMTP submission (issue 17, "Submission listener"; docs/submission.md): a real
// relay node's submission listener against the real edge. Clients are
// nodemailer (STARTTLS, AUTH PLAIN and LOGIN) and a byte-level client for the
// exact replies; what was accepted is read back through GET /api/v1/emails and
// delivered by the same node's outbound worker into a capture directory.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { openRaw, type RawSmtp } from '../relay-node/test-support/smtp-raw.js';
import type * as NodemailerModule from '../relay-node/node_modules/@types/nodemailer/index.js';
import { enroll, makeInstallationWide } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

// nodemailer is the relay node's dependency, not the test package's.
const nodemailer = createRequire(new URL('../relay-node/package.json', import.meta.url))('nodemailer') as typeof NodemailerModule;

const MAX_MESSAGE = 64 * 1024;
const MAX_AUTH_FAILURES = 3;
/** A client address the PROXY front is told about: public, so not loopback. */
const PUBLIC_CLIENT = '203.0.113.9';
/** Connections from here must send a PROXY header (the node trusts it as a balancer). */
const BALANCER = '127.0.0.2';

let stack: TestStack;
let dns: TestDnsServer;
let node: RelayNode;
let stateDir: string;
let captureDir: string;
let admin: string;
let acme: SeededProject;
let other: SeededProject;
let sender: string;
/** The node's credential, for speaking to the relay routes directly. */
let nodeToken: string;
const logs: LogLine[] = [];
const domain = `sub-${crypto.randomUUID().slice(0, 6)}.test`;

/** A verified sending domain of `projectId` (its DKIM key made by the API). */
async function verifiedDomain(token: string, name: string): Promise<void> {
  const d = await stack.call('POST', '/api/v1/domains', { token, body: { name } });
  expect(d.status, JSON.stringify(d.body)).toBe(201);
  await stack.sql.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now() WHERE id = $1', [d.body.domain.id]);
}

beforeAll(async () => {
  stack = await startTestStack({
    settings: {
      SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000', SERVICE_RATELIMIT_RELAY_NODE_INBOUND_PER_MINUTE: '100000',
      // Long enough that "within the lease" below cannot run out on a loaded machine (the default is 2 s).
      SERVICE_SUBMISSION_LEASE_TTL: '10s',
    },
  });
  dns = await startDnsServer();
  admin = await platformToken(stack);
  acme = await seedProject(stack, admin, 'acme');
  other = await seedProject(stack, admin, 'globex');
  await verifiedDomain((await acme.key(['domains:write'])).token, domain);
  await verifiedDomain((await other.key(['domains:write'])).token, `other-${domain}`);
  sender = (await acme.key(['emails:write'])).token;

  const enrolled = await enroll(stack, (await acme.key(['relay:write'])).token);
  nodeToken = enrolled.token;
  await makeInstallationWide(stack, enrolled.id);
  stateDir = mkdtempSync(join(tmpdir(), 'edgemail-submission-'));
  captureDir = join(stateDir, 'capture');
  await writeNodeState(stateDir, { edge_url: stack.url, node_id: enrolled.id, name: 'submission-test', token: enrolled.token, enrolled_at: new Date().toISOString() });
  node = await startTestNode({
    stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), submissionPort: 0, submissionTlsPort: 0,
    env: {
      SERVICE_OUTBOUND_CAPTURE_DIR: captureDir,
      SERVICE_INBOUND_MAX_MESSAGE_SIZE: String(MAX_MESSAGE),
      SERVICE_SUBMISSION_RATE_PER_MINUTE: '0',
      SERVICE_SUBMISSION_MAX_AUTH_FAILURES: String(MAX_AUTH_FAILURES),
      SERVICE_SUBMISSION_PROXY_PROTOCOL_ENABLED: 'true',
      SERVICE_SUBMISSION_PROXY_PROTOCOL_TRUSTED: BALANCER,
    },
  });
}, 120_000);

afterAll(async () => {
  await node?.stop();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const transport = (pass: string, method: 'PLAIN' | 'LOGIN' = 'PLAIN') => nodemailer.createTransport({
  host: '127.0.0.1', port: node.submissionPort!, secure: false, requireTLS: true, tls: { rejectUnauthorized: false },
  auth: { user: 'apikey', pass }, authMethod: method,
});

/** Every email of the key's project, newest first. */
async function emailsOf(token: string): Promise<any[]> {
  const r = await stack.call('GET', '/api/v1/emails?limit=200', { token });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.emails;
}

/**
 * A message is answered 250 once it is spooled and its key's lease allows it; the node hands it to the
 * edge in a batch right after (docs/submission.md, "Answered at the node"). Waits until the node's
 * submission spool is empty: every message answered 250 so far is in the email log.
 */
async function handedOver(): Promise<void> {
  await expect.poll(() => readdirSync(join(stateDir, 'submission-spool')).filter((name) => /\.(json|msg)$/.test(name)).length, { timeout: 15_000 }).toBe(0);
}

/** A session taken through STARTTLS and EHLO again (no AUTH yet). */
async function tlsSession(localAddress?: string): Promise<RawSmtp> {
  const raw = await openRaw(node.submissionPort!, { localAddress });
  expect(await raw.reply()).toMatch(/^220 /);
  expect(await raw.command('EHLO client.test')).toMatch(/^250/);
  expect(await raw.command('STARTTLS')).toMatch(/^220 /);
  await raw.startTls();
  expect(await raw.command('EHLO client.test')).toMatch(/^250/);
  return raw;
}

const plain = (token: string) => Buffer.from(`\0apikey\0${token}`).toString('base64');

/** AUTH PLAIN with `token` on a STARTTLS session; the reply. */
async function authReply(token: string, localAddress?: string): Promise<{ raw: RawSmtp; reply: string }> {
  const raw = await tlsSession(localAddress);
  return { raw, reply: await raw.command(`AUTH PLAIN ${plain(token)}`) };
}

describe('accepted submissions', () => {
  test('STARTTLS + AUTH PLAIN: the message is in the email log with origin smtp, and the relay node delivers it', async () => {
    const reader = (await acme.key(['emails:read'])).token;
    const info = await transport(sender).sendMail({
      from: `"Acme News" <news@${domain}>`, to: 'ann@example.org', cc: 'bob@example.org', bcc: 'carol@example.org',
      subject: 'Submitted over SMTP', text: 'plain body', html: '<p>html body</p>',
      headers: { 'X-Order-Id': 'A-1042' }, attachments: [{ filename: 'note.txt', content: 'attached bytes' }],
    });
    expect(info.response).toMatch(/^250 2\.0\.0 Message accepted as [0-9a-f-]{36}$/);
    const messageId = info.response.split(' ').at(-1);
    await handedOver();

    const rows = (await emailsOf(reader)).filter((e) => e.message_id === messageId);
    expect(rows.map((e) => [e.recipient, e.kind]).sort()).toEqual([['ann@example.org', 'to'], ['bob@example.org', 'cc'], ['carol@example.org', 'bcc']]);
    for (const row of rows) {
      // The From header as the service composes it from name and address; header names as the client wrote them (nodemailer: X-Order-ID).
      expect(row).toMatchObject({ origin: 'smtp', from: `Acme News <news@${domain}>`, subject: 'Submitted over SMTP', headers: { 'X-Order-ID': 'A-1042' }, sandbox: false });
    }
    const detail = await stack.call('GET', `/api/v1/emails/${rows[0].id}`, { token: reader });
    expect(detail.body.email).toMatchObject({ text: expect.stringContaining('plain body'), html: '<p>html body</p>', attachments: [{ filename: 'note.txt', content_type: 'text/plain', size: 14 }] });

    // Delivered by the node's outbound worker as an API send is (captured here), DKIM-signed.
    const ann = rows.find((e) => e.recipient === 'ann@example.org');
    await eventually(async () => (await stack.call('GET', `/api/v1/emails/${ann.id}`, { token: reader })).body.email.status, (status) => status === 'sent', 20_000);
    const delivered = readFileSync(join(captureDir, `${ann.id}.eml`), 'utf8');
    expect(delivered).toMatch(/^DKIM-Signature: .*d=/m);
    expect(delivered).toMatch(/^X-Order-ID: A-1042$/m);
    expect(delivered).not.toMatch(/^Bcc:/mi);
    expect(delivered).toMatch(/^Subject: Submitted over SMTP$/m);
  }, 60_000);

  test('AUTH LOGIN works the same; a header naming an address outside the envelope is not a recipient', async () => {
    const reader = (await acme.key(['emails:read'])).token;
    const info = await transport(sender, 'LOGIN').sendMail({
      envelope: { from: `news@${domain}`, to: ['dan@example.org'] },
      from: `news@${domain}`, to: ['dan@example.org', 'not-in-envelope@example.org'], subject: 'Login', text: 'x',
    });
    expect(info.response).toMatch(/^250 /);
    await handedOver();
    const rows = (await emailsOf(reader)).filter((e) => e.message_id === info.response.split(' ').at(-1));
    expect(rows.map((e) => e.recipient)).toEqual(['dan@example.org']);
    expect(rows[0]).toMatchObject({ origin: 'smtp', to: ['dan@example.org'] });
  });

  test('the implicit-TLS port takes AUTH at once; the heartbeat reports both submission listeners', async () => {
    const implicit = nodemailer.createTransport({ host: '127.0.0.1', port: node.submissionTlsPort!, secure: true, tls: { rejectUnauthorized: false }, auth: { user: acme.project.id, pass: sender } });
    expect((await implicit.sendMail({ from: `news@${domain}`, to: 'tls@example.org', subject: 'Implicit TLS', text: 'x' })).response).toMatch(/^250 /);
    const { rows: [row] } = await eventually(
      () => stack.sql.query('SELECT listeners FROM relay_nodes WHERE id = (SELECT id FROM relay_nodes ORDER BY created_at DESC LIMIT 1)'),
      (r) => JSON.stringify(r.rows[0]?.listeners ?? []).includes('submission'), 5000);
    // Each names what it presents (issue 19: per-listener certificate resolution): here the shared self-signed pair.
    const presents = { source: 'self_signed', certificate: 'self-signed', not_after: expect.any(String) };
    expect(row.listeners).toEqual(expect.arrayContaining([
      { name: 'submission', port: node.submissionPort, tls: 'starttls', proxy_protocol: true, certificate: presents },
      { name: 'submission', port: node.submissionTlsPort, tls: 'implicit', proxy_protocol: true, certificate: presents },
    ]));
  });

  test('a sandbox key\'s mail is captured, as on the API, and never delivered', async () => {
    const sandbox = (await acme.key(['sandbox:write'], { sandbox: true })).token;
    const info = await transport(sandbox).sendMail({ from: `news@${domain}`, to: 'sandboxed@example.org', subject: 'Sandbox', text: 'x' });
    const messageId = info.response.split(' ').at(-1);
    await handedOver();
    const { rows } = await stack.sql.query('SELECT e.status, e.id, m.origin, m.sandbox FROM emails e JOIN outbound_messages m ON m.id = e.message_id WHERE m.id = $1', [messageId]);
    expect(rows).toEqual([{ status: 'captured', id: expect.any(String), origin: 'smtp', sandbox: true }]);
    await new Promise((r) => setTimeout(r, 1500));
    expect(existsSync(join(captureDir, `${rows[0].id}.eml`))).toBe(false);
  });

  test('a suppressed recipient gets a suppressed row, exactly as on the API', async () => {
    const manager = (await acme.key(['suppressions:write', 'emails:read'])).token;
    const s = await stack.call('POST', '/api/v1/suppressions', { token: manager, body: { address: 'gone@example.org' } });
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    const info = await transport(sender).sendMail({ from: `news@${domain}`, to: ['gone@example.org', 'here@example.org'], subject: 'Suppressed', text: 'x' });
    await handedOver();
    const rows = (await emailsOf(manager)).filter((e) => e.message_id === info.response.split(' ').at(-1));
    // The file's node delivers (to its capture folder), so the other recipient may already be on its way.
    expect(Object.fromEntries(rows.map((e) => [e.recipient, e.status]))).toEqual({ 'gone@example.org': 'suppressed', 'here@example.org': expect.stringMatching(/^(queued|sending|sent)$/) });
  });
});

describe('the message size: one limit, advertised and enforced (docs/submission.md, "Message size")', () => {
  /** The send route's body limit at the default settings: ceil(4/3 × 10 MiB) + 1 MiB. */
  const EDGE_LIMIT = Math.ceil((10_485_760 * 4) / 3) + 1_048_576;
  let sized: RelayNode;
  let sizedDir: string;

  beforeAll(async () => {
    // A node at the default inbound.max_message_size (25 MiB): the edge's smaller limit is the one.
    const enrolled = await enroll(stack, (await acme.key(['relay:write'])).token);
    await makeInstallationWide(stack, enrolled.id);
    sizedDir = mkdtempSync(join(tmpdir(), 'edgemail-submission-size-'));
    await writeNodeState(sizedDir, { edge_url: stack.url, node_id: enrolled.id, name: 'submission-size', token: enrolled.token, enrolled_at: new Date().toISOString() });
    sized = await startTestNode({
      stack, stateDir: sizedDir, dnsAddress: dns.address, log: collectingLog([]), submissionPort: 0, outbound: false,
      env: { SERVICE_SUBMISSION_RATE_PER_MINUTE: '0' },
    });
  }, 60_000);
  afterAll(async () => {
    await sized?.stop();
    if (sizedDir) rmSync(sizedDir, { recursive: true, force: true });
  });

  test(`EHLO advertises SIZE ${EDGE_LIMIT} (not 26214400); MAIL FROM SIZE= above it is 552 5.3.4 before any data`, async () => {
    const raw = await openRaw(sized.submissionPort!);
    expect(await raw.reply()).toMatch(/^220 /);
    const ehlo = await raw.command('EHLO client.test');
    expect(ehlo).toMatch(new RegExp(`^250[ -]SIZE ${EDGE_LIMIT}$`, 'm'));
    expect(await raw.command(`AUTH PLAIN ${plain(sender)}`)).toMatch(/^235 /);
    expect(await raw.command(`MAIL FROM:<news@${domain}> SIZE=${EDGE_LIMIT + 1}`)).toMatch(new RegExp(`^552 5\\.3\\.4 .*maximum message size (of )?${EDGE_LIMIT}`));
    expect(await raw.command(`MAIL FROM:<news@${domain}> SIZE=${EDGE_LIMIT}`)).toMatch(/^250 /);
    raw.close();
  });

  test('a 17 MB message without SIZE=: 552 5.3.4 naming the limit at the dot, nothing stored or written', async () => {
    const before = (await stack.sql.query('SELECT count(*)::int AS n FROM outbound_messages')).rows[0].n;
    const raw = await openRaw(sized.submissionPort!);
    expect(await raw.reply()).toMatch(/^220 /);
    await raw.command('EHLO client.test');
    expect(await raw.command(`AUTH PLAIN ${plain(sender)}`)).toMatch(/^235 /);
    expect(await raw.command(`MAIL FROM:<news@${domain}>`)).toMatch(/^250 /);
    expect(await raw.command('RCPT TO:<huge@example.org>')).toMatch(/^250 /);
    expect(await raw.command('DATA')).toMatch(/^354 /);
    const line = `${'x'.repeat(998)}\r\n`;
    raw.write(`From: news@${domain}\r\nTo: huge@example.org\r\nSubject: Huge\r\n\r\n`);
    for (let i = 0; i < 17_000; i++) raw.write(line);
    raw.write('.\r\n');
    // The node's own cap, not the edge's 413 after a hand-over ("too large for the service").
    expect(await raw.reply(60_000)).toBe(`552 5.3.4 Message exceeds the fixed maximum message size of ${EDGE_LIMIT} bytes`);
    raw.close();
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM outbound_messages')).rows[0].n).toBe(before);
    // No message and no partial file kept in the submission spool.
    await expect.poll(() => readdirSync(join(sizedDir, 'submission-spool')).filter((name) => /\.(eml|json|msg)/.test(name))).toEqual([]);
  });
});

describe('answered at the node (docs/submission.md, "Answered at the node")', () => {
  test('a message answered 250 from the lease that the edge then refuses is in the log as failed, with the reason and an email.failed event', async () => {
    const late = `late-${domain}`;
    await verifiedDomain((await acme.key(['domains:write'])).token, late);
    const key = (await acme.key(['emails:write'])).token;
    // The first message takes the lease, which names the domain as verified.
    expect((await transport(key).sendMail({ from: `news@${late}`, to: 'first@example.org', subject: 'Leased', text: 'x' })).response).toMatch(/^250 /);
    await stack.sql.query('UPDATE domains SET verified_at = NULL WHERE name = $1', [late]);
    // Within the lease the node still vouches for the domain: 250; the edge, which sees it unverified, refuses it.
    const info = await transport(key).sendMail({ from: `news@${late}`, to: 'late@example.org', subject: 'Refused later', text: 'x' });
    expect(info.response).toMatch(/^250 2\.0\.0 Message accepted as [0-9a-f-]{36}$/);
    await handedOver();
    const { rows } = await stack.sql.query('SELECT id, status, recipient, error_message FROM emails WHERE message_id = $1', [info.response.split(' ').at(-1)]);
    expect(rows).toEqual([{ id: expect.any(String), status: 'failed', recipient: 'late@example.org', error_message: expect.stringMatching(/^550 5\.7\.1 from domain late-/) }]);
    const events = await stack.sql.query(`SELECT data FROM outbox WHERE event = 'email.failed' AND data->>'id' = $1`, [rows[0].id]);
    expect(events.rows).toEqual([{ data: expect.objectContaining({ status: 'failed', recipients: ['late@example.org'], error_message: rows[0].error_message }) }]);
  });
});

describe('a message sent again (docs/submission.md, "Sent twice?")', () => {
  const countOf = async (subject: string) =>
    (await stack.sql.query('SELECT count(*)::int AS n FROM outbound_messages WHERE subject = $1', [subject])).rows[0].n as number;

  test('the same Message-ID and envelope in a new session: 250 naming the first message, one email; another Message-ID is another email', async () => {
    const subject = `Retried ${crypto.randomUUID()}`;
    const to = ['retry@example.org', 'again@example.org'];
    const mail = (messageId: string, rcpt = to) => ({
      from: `news@${domain}`, to, subject, text: 'once', messageId, envelope: { from: `news@${domain}`, to: rcpt },
    });
    const messageId = `<${crypto.randomUUID()}@client.test>`;
    const first = await transport(sender).sendMail(mail(messageId));
    expect(first.response).toMatch(/^250 2\.0\.0 Message accepted as [0-9a-f-]{36}$/);
    // As a client sends it after its connection broke before the 250: a new session, the same message
    // (RCPT TO in another order: the envelope is compared sorted).
    const again = await transport(sender).sendMail(mail(messageId, [...to].reverse()));
    expect(again.response).toBe(first.response);
    await handedOver();
    expect(await countOf(subject)).toBe(1);
    const { rows } = await stack.sql.query('SELECT count(*)::int AS n FROM emails WHERE message_id = $1', [first.response.split(' ').at(-1)]);
    expect(rows[0].n).toBe(2); // one message, one email per recipient

    const other = await transport(sender).sendMail(mail(`<${crypto.randomUUID()}@client.test>`));
    expect(other.response).toMatch(/^250 2\.0\.0 /);
    expect(other.response).not.toBe(first.response);
    await handedOver();
    expect(await countOf(subject)).toBe(2);
  });

  test('the same Message-ID to other recipients is another message; with other content it is refused 554 5.6.0, nothing sent', async () => {
    const subject = `Reused ${crypto.randomUUID()}`;
    const messageId = `<${crypto.randomUUID()}@client.test>`;
    const first = await transport(sender).sendMail({ from: `news@${domain}`, to: 'one@example.org', subject, text: 'x', messageId });
    const otherEnvelope = await transport(sender).sendMail({ from: `news@${domain}`, to: 'two@example.org', subject, text: 'x', messageId });
    expect(otherEnvelope.response).not.toBe(first.response);
    await handedOver();
    expect(await countOf(subject)).toBe(2);
    const err = await transport(sender).sendMail({ from: `news@${domain}`, to: 'one@example.org', subject, text: 'changed', messageId }).catch((e) => e);
    expect(err.response).toMatch(/^554 5\.6\.0 a message with this Message-ID and envelope was submitted in the last 24 hours with other content/);
    await handedOver();
    expect(await countOf(subject)).toBe(2);
  });

  test('a message without Message-ID sent twice is sent twice (nothing to recognise it by)', async () => {
    const subject = `No id ${crypto.randomUUID()}`;
    const message = `From: news@${domain}\r\nTo: noid@example.org\r\nSubject: ${subject}\r\n\r\nx\r\n`;
    for (let i = 0; i < 2; i++) {
      const info = await transport(sender).sendMail({ envelope: { from: `news@${domain}`, to: ['noid@example.org'] }, raw: message });
      expect(info.response).toMatch(/^250 2\.0\.0 /);
    }
    await handedOver();
    expect(await countOf(subject)).toBe(2);
  });
});

describe('the client\'s Message-ID and Date (docs/submission.md, "Kept as written")', () => {
  const reader = () => acme.key(['emails:read']).then((k) => k.token);
  /** The one email of `subject` once delivered: its API detail and the bytes the outbound worker delivered. */
  async function delivered(subject: string): Promise<{ email: any; bytes: string }> {
    const token = await reader();
    const row = (await emailsOf(token)).find((e) => e.subject === subject);
    expect(row).toBeDefined();
    await eventually(async () => (await stack.call('GET', `/api/v1/emails/${row.id}`, { token })).body.email.status, (status) => status === 'sent', 20_000);
    const email = (await stack.call('GET', `/api/v1/emails/${row.id}`, { token })).body.email;
    return { email, bytes: readFileSync(join(captureDir, `${row.id}.eml`), 'utf8') };
  }

  test('a valid Message-ID and Date are delivered as the client wrote them; the API names the Message-ID; the retry dedupe still answers once', async () => {
    const subject = `Threaded ${crypto.randomUUID()}`;
    const messageId = `<${crypto.randomUUID()}.thread@client.example>`;
    const mail = {
      from: `news@${domain}`, to: 'thread@example.org', subject, text: 'kept', messageId,
      date: 'Tue, 1 Jul 2003 10:52:37 +0200', inReplyTo: '<parent@client.example>', references: ['<parent@client.example>'],
    };
    const info = await transport(sender).sendMail(mail);
    expect(info.response).toMatch(/^250 2\.0\.0 Message accepted as [0-9a-f-]{36}$/);
    const { email, bytes } = await delivered(subject);
    expect(bytes).toMatch(new RegExp(`^Message-ID: ${messageId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\r?$`, 'm'));
    expect(bytes).toMatch(/^Date: Tue, 01 Jul 2003 10:52:37 \+0200\r?$/m);
    expect(bytes).toMatch(/^In-Reply-To: <parent@client\.example>\r?$/m);
    expect(email.message_id_header).toBe(messageId);
    // Sent again in a new session (its 250 lost): the first answer, nothing sent twice.
    const again = await transport(sender).sendMail(mail);
    expect(again.response).toBe(info.response);
    const { rows } = await stack.sql.query('SELECT count(*)::int AS n FROM outbound_messages WHERE subject = $1', [subject]);
    expect(rows[0].n).toBe(1);
  }, 60_000);

  test('a malformed Message-ID or Date, or none, is written anew', async () => {
    const subject = `Malformed ${crypto.randomUUID()}`;
    const message = [
      `From: news@${domain}`, 'To: fixed@example.org', `Subject: ${subject}`,
      'Message-ID: not a msg-id at all', 'Date: yesterday at noon', '', 'x', '',
    ].join('\r\n');
    const before = Date.now();
    const info = await transport(sender).sendMail({ envelope: { from: `news@${domain}`, to: ['fixed@example.org'] }, raw: message });
    expect(info.response).toMatch(/^250 2\.0\.0 /);
    const { email, bytes } = await delivered(subject);
    expect(email.message_id_header).toMatch(new RegExp(`^<[0-9a-f-]{36}@${domain.replace(/\./g, '\\.')}>$`));
    expect(bytes).toMatch(new RegExp(`^Message-ID: ${email.message_id_header}\r?$`, 'm'));
    expect(bytes).not.toMatch(/not a msg-id|yesterday/);
    const date = Date.parse(/^Date: (.*)$/m.exec(bytes)![1]!);
    expect(date).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000);

    const none = `No headers ${crypto.randomUUID()}`;
    await transport(sender).sendMail({ envelope: { from: `news@${domain}`, to: ['fixed@example.org'] }, raw: `From: news@${domain}\r\nTo: fixed@example.org\r\nSubject: ${none}\r\n\r\nx\r\n` });
    const fresh = await delivered(none);
    expect(fresh.email.message_id_header).toMatch(/^<[0-9a-f-]{36}@/);
    expect(fresh.bytes).toMatch(/^Date: .*\+0000\r?$/m);
  }, 60_000);
});

describe('the hand-over', () => {
  const submission = (spoolId: string, subject: string) => ({
    spool_id: spoolId, token: sender, client_address: '127.0.0.1', mail_from: `news@${domain}`, rcpt_to: ['idem@example.org'], size: 100,
    message: { from: `news@${domain}`, to: ['idem@example.org'], cc: [], bcc: [], reply_to: [], subject, text: 'x', headers: {}, attachments: [] },
  });

  test('idempotent by spool id: the same id again answers as the first time and writes nothing; other content under it is refused', async () => {
    const spoolId = `bench-${crypto.randomUUID()}`;
    const first = await stack.call('POST', '/relay/v1/submission/messages', { token: nodeToken, body: submission(spoolId, 'Once') });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body).toMatchObject({ accepted: true, emails: [{ recipient: 'idem@example.org', status: 'queued' }] });
    const again = await stack.call('POST', '/relay/v1/submission/messages', { token: nodeToken, body: submission(spoolId, 'Once') });
    expect(again.body).toEqual(first.body);
    const { rows } = await stack.sql.query("SELECT count(*)::int AS n FROM outbound_messages WHERE subject = 'Once'");
    expect(rows[0].n).toBe(1);
    const other = await stack.call('POST', '/relay/v1/submission/messages', { token: nodeToken, body: submission(spoolId, 'Other') });
    expect(other.body).toMatchObject({ accepted: false, code: 554, text: expect.stringMatching(/^5\.6\.0 /) });
  });

  test('a batch handed over several times at once (a slow answer sent again, overlapping hand-overs): all 200, one sent and the rest replayed, one message, one email', async () => {
    const id = crypto.randomUUID();
    const base = submission('race', `Raced ${id}`);
    // With an attachment: its bytes are stored under the message id, which a send refused for the race must not take away.
    const message = { ...base.message, attachments: [{ filename: 'race.txt', content_type: 'text/plain', content: Buffer.from('raced bytes').toString('base64') }] };
    const item = (n: number) => ({ ...base, spool_id: `race-${n}-${crypto.randomUUID()}`, token: undefined, message, id, project_id: acme.project.id, sandbox: false });
    // At once: each request finds the id unknown before any of them has written it.
    const answers = await Promise.all(Array.from({ length: 6 }, (_, n) => stack.call('POST', '/relay/v1/submission/batch', {
      token: nodeToken, headers: { 'x-edgemail-messages': '1' }, body: { messages: [item(n)] },
    })));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).toBe(200);
    const outcomes = answers.map((a) => a.body.results[0].outcome).sort();
    expect(outcomes).toEqual(['replayed', 'replayed', 'replayed', 'replayed', 'replayed', 'sent']);
    const messages = await stack.sql.query('SELECT count(*)::int AS n FROM outbound_messages WHERE id = $1', [id]);
    expect(messages.rows[0].n).toBe(1);
    // One recipient row (queued, or already claimed by the node's outbound worker).
    const { rows } = await stack.sql.query('SELECT id FROM emails WHERE message_id = $1', [id]);
    expect(rows).toHaveLength(1);
    const events = await stack.sql.query(`SELECT event, count(*)::int AS n FROM outbox WHERE data->>'id' = $1 GROUP BY event`, [rows[0].id]);
    for (const e of events.rows) expect(e.n, e.event).toBe(1);
    const attachment = await stack.call('GET', `/api/v1/emails/${rows[0].id}/attachments/0`, { token: (await acme.key(['emails:read'])).token });
    expect(attachment.status).toBe(200);
    expect(attachment.body).toBe('raced bytes');
  });

  test('a field the send route refuses is a 550 5.6.0 naming it (a CR LF in a custom header cannot add a header)', async () => {
    const body = submission(`x-${crypto.randomUUID()}`, 'Injected');
    body.message.headers = { 'X-Note': 'a\r\nBcc: evil@example.org' } as Record<string, string>;
    const r = await stack.call('POST', '/relay/v1/submission/messages', { token: nodeToken, body });
    expect(r.body).toEqual({ accepted: false, code: 550, text: '5.6.0 message refused: headers.X-Note: must not contain CR or LF' });
  });

  test('a key revoked after AUTH: the session\'s next message is refused 554 5.7.8', async () => {
    const key = await acme.key(['emails:write']);
    const { raw, reply } = await authReply(key.token);
    expect(reply).toMatch(/^235 /);
    await stack.call('POST', `/api/v1/api-keys/${key.api_key.id}/revoke`, { token: admin, headers: { 'X-Service-Project-Id': acme.project.id } });
    expect(await raw.command(`MAIL FROM:<news@${domain}>`)).toMatch(/^250 /);
    expect(await raw.command('RCPT TO:<late@example.org>')).toMatch(/^250 /);
    expect(await raw.command('DATA')).toMatch(/^354 /);
    raw.write(`From: news@${domain}\r\nTo: late@example.org\r\nSubject: Late\r\n\r\nx\r\n.\r\n`);
    expect(await raw.reply(15_000)).toBe('554 5.7.8 API key revoked');
    raw.close();
  });
});

describe('refusals', () => {
  test('revoked, expired and IP-restricted keys, and a key without emails:write, fail AUTH with 535 5.7.8 naming why', async () => {
    const revoked = await acme.key(['emails:write']);
    const revoke = await stack.call('POST', `/api/v1/api-keys/${revoked.api_key.id}/revoke`, { token: admin, headers: { 'X-Service-Project-Id': acme.project.id } });
    expect(revoke.status, JSON.stringify(revoke.body)).toBeLessThan(300);
    const expired = await acme.key(['emails:write'], { expires_at: new Date(Date.now() + 1500).toISOString() });
    await new Promise((r) => setTimeout(r, 2000));
    const restricted = await acme.key(['emails:write'], { allowed_ips: ['198.51.100.0/24'] });
    const reader = await acme.key(['emails:read']);
    const cases: [string, RegExp][] = [
      [revoked.token, /^535 5\.7\.8 .*API key revoked/],
      [expired.token, /^535 5\.7\.8 .*API key expired/],
      [restricted.token, /^535 5\.7\.8 .*not allowed from address 127\.0\.1\.3/],
      [reader.token, /^535 5\.7\.8 .*permission emails:write required/],
    ];
    for (const [i, [token, expected]] of cases.entries()) {
      // An address of its own each (127.0.1.1, …), so these failures never reach the per-address limit.
      const { raw, reply } = await authReply(token, `127.0.1.${i + 1}`);
      expect(reply).toMatch(expected);
      raw.close();
    }
  });

  test('AUTH before STARTTLS: refused 538 5.7.11 for a client that is not loopback (a public address through the PROXY front)', async () => {
    const raw = await openRaw(node.submissionPort!, { localAddress: BALANCER });
    raw.write(`PROXY TCP4 ${PUBLIC_CLIENT} 127.0.0.1 40000 2587\r\n`);
    expect(await raw.reply()).toMatch(/^220 /);
    expect(await raw.command('EHLO client.test')).toMatch(/STARTTLS/);
    expect(await raw.command(`AUTH PLAIN ${plain(sender)}`)).toMatch(/^538 5\.7\.11 /);
    expect(await raw.command(`MAIL FROM:<news@${domain}>`)).toMatch(/^530 /);
    raw.close();
  });

  test('AUTH PLAIN with malformed base64 is 501 5.5.2 (never 454), initial response or continuation; an empty password is 535 5.7.8', async () => {
    // Its own address, so the 535 below counts toward no other test's failures.
    const raw = await tlsSession('127.0.0.5');
    for (const junk of ['!!!not-base64!!!', 'AAA', 'AA=A', `${plain(sender)}%`]) {
      expect(await raw.command(`AUTH PLAIN ${junk}`)).toBe('501 5.5.2 Malformed AUTH response: not valid base64 (RFC 4954)');
    }
    expect(await raw.command('AUTH PLAIN')).toMatch(/^334/);
    expect(await raw.command('@@@@')).toBe('501 5.5.2 Malformed AUTH response: not valid base64 (RFC 4954)');
    expect(await raw.command('AUTH LOGIN')).toMatch(/^334/);
    expect(await raw.command(Buffer.from('apikey').toString('base64'))).toMatch(/^334/);
    expect(await raw.command('not base64 at all')).toBe('501 5.5.2 Malformed AUTH response: not valid base64 (RFC 4954)');
    // Valid base64 of authzid NUL authcid NUL and no password: a wrong password, not the edge's failure.
    expect(await raw.command('AUTH PLAIN AAA=')).toMatch(/^535 5\.7\.8 /);
    // The session is still usable: a good key is taken.
    expect(await raw.command(`AUTH PLAIN ${plain(sender)}`)).toMatch(/^235 /);
    raw.close();
  });

  test('an 8-bit local part without SMTPUTF8 is 553 5.6.7 at MAIL FROM and RCPT TO (RFC 6531)', async () => {
    const { raw, reply } = await authReply(sender);
    expect(reply).toMatch(/^235 /);
    expect(await raw.command(`MAIL FROM:<jörg@${domain}>`)).toMatch(/^553 5\.6\.7 .*SMTPUTF8/);
    expect(await raw.command(`MAIL FROM:<news@${domain}>`)).toMatch(/^250 /);
    expect(await raw.command('RCPT TO:<jörg@example.org>')).toMatch(/^553 5\.6\.7 .*SMTPUTF8/);
    raw.close();
  });

  test('AUTH before STARTTLS from loopback is taken (the same machine)', async () => {
    const raw = await openRaw(node.submissionPort!);
    expect(await raw.reply()).toMatch(/^220 /);
    await raw.command('EHLO client.test');
    expect(await raw.command(`AUTH PLAIN ${plain(sender)}`)).toMatch(/^235 /);
    raw.close();
  });

  test('a message over inbound.max_message_size: 552 5.3.4 after the data, nothing written', async () => {
    const before = (await stack.sql.query('SELECT count(*)::int AS n FROM outbound_messages')).rows[0].n;
    // By hand: nodemailer itself refuses a message over the SIZE the server advertised.
    const { raw, reply } = await authReply(sender);
    expect(reply).toMatch(/^235 /);
    expect(await raw.command(`MAIL FROM:<news@${domain}>`)).toMatch(/^250 /);
    expect(await raw.command('RCPT TO:<big@example.org>')).toMatch(/^250 /);
    expect(await raw.command('DATA')).toMatch(/^354 /);
    raw.write(`From: news@${domain}\r\nTo: big@example.org\r\nSubject: Big\r\n\r\n${`${'x'.repeat(998)}\r\n`.repeat(Math.ceil((MAX_MESSAGE * 2) / 1000))}.\r\n`);
    expect(await raw.reply(15_000)).toMatch(/^552 5\.3\.4 /);
    raw.close();
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM outbound_messages')).rows[0].n).toBe(before);
  });

  test('a From on another project\'s domain, or on no domain of the project: 550 5.7.1 naming the domain', async () => {
    for (const from of [`news@other-${domain}`, 'news@unregistered.test']) {
      const err = await transport(sender).sendMail({ from, to: 'x@example.org', subject: 'Other', text: 'x' }).catch((e) => e);
      expect(err.responseCode, String(err)).toBe(550);
      expect(err.response).toMatch(new RegExp(`^550 5\\.7\\.1 from domain ${from.split('@')[1]!.replace(/\./g, '\\.')} `));
    }
  });

  test('200 RCPTs: the 51st and later are refused 452 4.5.3 at RCPT; the message goes to the first 50', async () => {
    const to = Array.from({ length: 200 }, (_, i) => `r${i}@example.org`);
    const info = await transport(sender).sendMail({ envelope: { from: `news@${domain}`, to }, from: `news@${domain}`, to: to.slice(0, 1), subject: 'Many', text: 'x' });
    expect(info.accepted).toHaveLength(50);
    expect(info.rejected).toHaveLength(150);
    expect(String((info as any).rejectedErrors[0].response)).toMatch(/^452 4\.5\.3 Too many recipients: at most 50/);
    await handedOver();
    const { rows } = await stack.sql.query('SELECT count(*)::int AS n FROM emails WHERE message_id = $1', [info.response.split(' ').at(-1)]);
    expect(rows[0].n).toBe(50);
  });

  test('the plan\'s hourly limit reached: 452 4.7.0 with the API\'s message; nothing written', async () => {
    const p = await stack.call('POST', '/api/v1/admin/plans', { token: admin, body: { name: `tiny-${crypto.randomUUID().slice(0, 6)}`, hourly_email_limit: 1, daily_email_limit: 0 } });
    const project = await stack.call('POST', '/api/v1/admin/projects', { token: admin, body: { name: 'limited', plan_id: p.body.plan.id } });
    const key = async (permissions: string[]) => (await stack.call('POST', '/api/v1/api-keys', { token: admin, headers: { 'X-Service-Project-Id': project.body.project.id }, body: { name: 'k', permissions } })).body.token as string;
    const limitedDomain = `limited-${domain}`;
    await verifiedDomain(await key(['domains:write']), limitedDomain);
    const token = await key(['emails:write']);
    expect((await transport(token).sendMail({ from: `a@${limitedDomain}`, to: 'one@example.org', subject: 'One', text: 'x' })).response).toMatch(/^250 /);
    const err = await transport(token).sendMail({ from: `a@${limitedDomain}`, to: 'two@example.org', subject: 'Two', text: 'x' }).catch((e) => e);
    expect(err.response).toBe(`452 4.7.0 hourly email limit reached (1 per hour on plan ${p.body.plan.name})`);
    const { rows } = await stack.sql.query('SELECT count(*)::int AS n FROM emails WHERE project_id = $1', [project.body.project.id]);
    expect(rows[0].n).toBe(1);
  });

  test(`bad AUTH: 535 5.7.8 up to ${MAX_AUTH_FAILURES} times from one address, then 421 4.7.0 and closed; new sessions too`, async () => {
    // Its own address (127.0.0.3), so the limit does not reach the other tests' sessions.
    const session = async () => {
      const raw = await openRaw(node.submissionPort!, { localAddress: '127.0.0.3' });
      const greeting = await raw.reply();
      return { raw, greeting };
    };
    const bad = `myk_${'a'.repeat(8)}_${'b'.repeat(40)}`;
    const { raw, greeting } = await session();
    expect(greeting).toMatch(/^220 /);
    await raw.command('EHLO client.test');
    for (let i = 0; i < MAX_AUTH_FAILURES; i++) expect(await raw.command(`AUTH PLAIN ${plain(bad)}`)).toMatch(/^535 5\.7\.8 /);
    expect(await raw.command(`AUTH PLAIN ${plain(bad)}`)).toMatch(/^421 4\.7\.0 Too many failed AUTH attempts/);
    await raw.closed;
    const again = await session();
    expect(again.greeting).toMatch(/^421 4\.7\.0 Too many failed AUTH attempts/);
    await again.raw.closed;
  });
});
