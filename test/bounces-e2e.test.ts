// Bounces and complaints end to end (issue 17): a real relay node delivers
// with the VERP return path as MAIL FROM to a receiving SMTP server; DSNs and
// ARF reports are then sent over SMTP to the node's inbound listener at that
// return path, forwarded to the real edge, and recorded: the bounce record,
// the email's status, the suppression, the signed webhook, and the next send
// to the address refused as suppressed. Forged reports change nothing.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyWebhook } from '@edgemail/shared';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { startReceiver, type Receiver } from '../relay-node/test-support/receiver.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { enroll, inboundBody, inboundMeta, makeInstallationWide } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const BOUNCE_DOMAIN = 'bounces.mail.edgemail.test';
const RETURN_PATH = new RegExp(`^bounce-([0-9a-f]{32})-([0-9a-f]{20})@${BOUNCE_DOMAIN.replace(/\./g, '\\.')}$`);
const GONE_REPLY = '5.1.1 <gone@dest.test>: Recipient address rejected: User unknown';

let stack: TestStack;
let dns: TestDnsServer;
let rx: Receiver;
let hooks: WebhookReceiver;
let node: RelayNode;
let stateDir: string;
let webhookSecret: string;
let sender: string;
let otherSender: string;
let projectId: string;
let nodeToken: string;
let managerKey: string;
const logs: LogLine[] = [];

async function verifiedDomain(token: string, name: string) {
  const domain = await stack.call('POST', '/api/v1/domains', { token, body: { name } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.body.domain.id]);
}

beforeAll(async () => {
  stack = await startTestStack({
    captureLogs: true,
    settings: {
      // The bounce domain is bounces.<host of server.public_url>.
      SERVICE_SERVER_PUBLIC_URL: 'https://mail.edgemail.test',
      SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000',
    },
  });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'acme');
  const other = await seedProject(stack, admin, 'globex');
  projectId = tenant.project.id;
  sender = (await tenant.key(['emails:write', 'emails:read', 'suppressions:read', 'bounces:read'])).token;
  otherSender = (await other.key(['emails:write', 'emails:read', 'domains:write'])).token;
  const manager = (await tenant.key(['domains:write', 'relay:write', 'webhooks:write'])).token;
  await verifiedDomain(manager, 'acme.test');
  await verifiedDomain(otherSender, 'globex.test');

  rx = await startReceiver({ starttls: false, rcptReply: (to) => (to.startsWith('gone@') ? { code: 550, text: GONE_REPLY } : null) });
  dns = await startDnsServer({
    'mx.dest.test': { A: ['127.0.0.1'] },
    'dest.test': { MX: [{ preference: 10, exchange: 'mx.dest.test' }] },
  });
  hooks = await startWebhookReceiver();
  const webhook = await stack.call('POST', '/api/v1/webhooks', { token: manager, body: { url: `${hooks.url}/hook`, events: ['email.bounced', 'email.complained'] } });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
  webhookSecret = webhook.body.webhook.secret ?? webhook.body.secret;

  // The operator's node: installation-wide, so it delivers every project's mail and takes the bounce domain.
  const enrolled = await enroll(stack, manager, 'mx-a');
  nodeToken = enrolled.token;
  managerKey = manager;
  await makeInstallationWide(stack, enrolled.id);
  stateDir = mkdtempSync(join(tmpdir(), 'bounces-e2e-'));
  await writeNodeState(stateDir, { edge_url: stack.url, node_id: enrolled.id, name: 'mx-a', token: enrolled.token, enrolled_at: new Date().toISOString() });
  node = await startTestNode({
    stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs),
    env: {
      SERVICE_OUTBOUND_MX_PORT: String(rx.port), SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true',
      SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false', SERVICE_OUTBOUND_HELO_NAME: 'relay-a.acme.test',
    },
    outbound: { idlePollMs: 200 },
  });
});

afterAll(async () => {
  await node?.stop();
  await rx?.close();
  await hooks?.close();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

// ---- helpers -----------------------------------------------------------------------------------

async function send(to: string, token = sender, from = 'Acme News <news@acme.test>') {
  const r = await stack.call('POST', '/api/v1/emails/send', { token, body: { from, to: [to], subject: `Hello ${crypto.randomUUID().slice(0, 8)}`, text: 'Hello there.' } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.emails[0] as { id: string; recipient: string; status: string };
}

const emailOf = async (id: string, token = sender) => (await stack.call('GET', `/api/v1/emails/${id}`, { token })).body.email;
const untilStatus = (id: string, status: string, token = sender) => eventually(() => emailOf(id, token), (e) => e.status === status, 15_000);

/** Sends to `to` and waits until the receiving server has it: its id, its return path (MAIL FROM) and its Message-ID. */
async function delivered(to: string, token = sender, from?: string) {
  const email = await send(to, token, from);
  await untilStatus(email.id, 'sent', token);
  const arrival = rx.messages.find((m) => m.rcptTo[0] === to && m.bytes.toString('latin1').includes(`\r\nTo: ${to}`))!;
  expect(arrival).toBeDefined();
  return { id: email.id, returnPath: arrival.mailFrom, messageId: /^Message-ID:\s*(<[^>\r\n]+>)/im.exec(arrival.bytes.toString('latin1'))![1]!, bytes: arrival.bytes };
}

const crlf = (text: string) => text.replace(/\r?\n/g, '\r\n');

function dsn(to: string, recipient: string, messageId: string, block: string): string {
  return crlf(`From: Mail Delivery System <MAILER-DAEMON@mx.dest.test>
To: ${to}
Subject: Undelivered Mail Returned to Sender
Message-ID: <${crypto.randomUUID()}@mx.dest.test>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="DSN-BOUNDARY"

--DSN-BOUNDARY
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.dest.test. Your message could not be delivered.

--DSN-BOUNDARY
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.dest.test
Arrival-Date: Thu, 26 Nov 2026 14:00:00 +0000

Final-Recipient: rfc822; ${recipient}
Original-Recipient: rfc822;${recipient}
${block}

--DSN-BOUNDARY
Content-Type: text/rfc822-headers

From: Acme News <news@acme.test>
To: ${recipient}
Message-ID: ${messageId}

--DSN-BOUNDARY--
`);
}

function arf(to: string, recipient: string, original: Buffer): string {
  return crlf(`From: Feedback Loop <fbl@isp.dest.test>
To: ${to}
Subject: FW: complaint
Message-ID: <${crypto.randomUUID()}@isp.dest.test>
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="ARF-BOUNDARY"

--ARF-BOUNDARY
Content-Type: text/plain

This is an email abuse report for an email message received from IP 127.0.0.1.

--ARF-BOUNDARY
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: ExampleFBL/1.0
Version: 1
Original-Mail-From: <${to}>
Original-Rcpt-To: <${recipient}>
Arrival-Date: Thu, 26 Nov 2026 14:00:00 +0000

--ARF-BOUNDARY
Content-Type: message/rfc822
Content-Disposition: inline

`) + original.toString('latin1') + '\r\n--ARF-BOUNDARY--\r\n';
}

/** Delivers a report to the node's inbound listener as a receiving MTA does (null sender) and expects the 250. */
async function report(to: string, message: string) {
  const sent = await sendMessage({ port: node.port, from: '', to, message, helo: 'mx.dest.test' });
  expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
  expect(sent.response).toMatch(/^250 /);
}

const bouncesOf = async (emailId: string) => {
  const r = await stack.call('GET', `/api/v1/bounces?email_id=${emailId}`, { token: sender });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body.bounces as any[];
};
const suppressionOf = async (address: string) =>
  (await stack.call('GET', '/api/v1/suppressions?limit=200', { token: sender })).body.suppressions.find((s: { address: string }) => s.address === address);
const hooksFor = (emailId: string) => hooks.received().filter((r) => r.body?.data?.id === emailId);
const inboundCount = async () => Number((await stack.sql.query('SELECT count(*) AS n FROM inbound_emails')).rows[0].n);

// ---- the tests ---------------------------------------------------------------------------------

describe('the return path', () => {
  test('MAIL FROM is bounce-<email id>-<mac>@bounces.<public host>; the From header is unchanged', async () => {
    const mail = await delivered('ann.path@dest.test');
    const m = RETURN_PATH.exec(mail.returnPath);
    expect(m, mail.returnPath).not.toBeNull();
    expect(m![1]).toBe(mail.id.replace(/-/g, ''));
    expect(mail.bytes.toString('latin1')).toMatch(/^From: Acme News <news@acme\.test>\r$/m);
  });
});

describe('the bounce domain in the relay nodes\' domain list', () => {
  test('an installation-wide node is told it (so RCPT to a return path is accepted); a node a project enrolled is not', async () => {
    const wide = await stack.call('GET', '/relay/v1/domains', { token: nodeToken });
    // The projects' domains here are verified for sending, not proven for inbound mail: the list is the bounce domain alone.
    expect(wide.body.domains).toEqual([BOUNCE_DOMAIN]);
    const own = await enroll(stack, managerKey, 'mx-own');
    const scoped = await stack.call('GET', '/relay/v1/domains', { token: own.token });
    expect(scoped.body.domains).toEqual([]);
  });
});

describe('reports at the return path', () => {
  test('a DSN (5.1.1 failed): bounce record, email bounced, address suppressed, email.bounced delivered signed, next send suppressed; not inbound mail', async () => {
    const inboundBefore = await inboundCount();
    const mail = await delivered('ann@dest.test');
    await report(mail.returnPath, dsn(mail.returnPath, 'ann@dest.test', mail.messageId,
      'Action: failed\nStatus: 5.1.1\nRemote-MTA: dns; inner.dest.test\nDiagnostic-Code: smtp; 550 5.1.1 <ann@dest.test>: Recipient address\n rejected: User unknown'));

    const entry = await untilStatus(mail.id, 'bounced');
    expect(entry.error_message).toBe('smtp; 550 5.1.1 <ann@dest.test>: Recipient address rejected: User unknown');
    const [bounce, ...more] = await bouncesOf(mail.id);
    expect(more).toEqual([]);
    expect(bounce).toEqual({
      id: expect.any(String), project_id: projectId, email_id: mail.id, recipient: 'ann@dest.test', type: 'hard', source: 'dsn',
      smtp_code: 550, status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 <ann@dest.test>: Recipient address rejected: User unknown',
      remote_mta: 'inner.dest.test', feedback_type: null, original_message_id: mail.messageId, created_at: expect.any(String),
    });
    expect(await suppressionOf('ann@dest.test')).toMatchObject({ reason: 'hard_bounce', source_email_id: mail.id });

    const [hook] = await eventually(async () => hooksFor(mail.id), (r) => r.length > 0, 10_000);
    const verdict = await verifyWebhook({
      secret: webhookSecret, rawBody: new Uint8Array(hook!.raw),
      timestamp: hook!.headers['x-service-timestamp'] as string, signature: hook!.headers['x-service-signature'] as string,
    });
    expect(verdict.ok).toBe(true);
    expect(hook!.body).toMatchObject({
      event: 'email.bounced',
      data: { id: mail.id, project_id: projectId, status: 'bounced', recipients: ['ann@dest.test'], bounce: { id: bounce.id, type: 'hard', status: '5.1.1', source: 'dsn' } },
    });

    const next = await send('ann@dest.test');
    expect(next.status).toBe('suppressed');
    expect(await inboundCount()).toBe(inboundBefore);
  });

  test('an ARF complaint: complained, suppressed as complaint, email.complained, next send suppressed', async () => {
    const mail = await delivered('bob@dest.test');
    await report(mail.returnPath, arf(mail.returnPath, 'bob@dest.test', mail.bytes));
    await untilStatus(mail.id, 'complained');
    expect((await bouncesOf(mail.id)).map((b) => [b.type, b.source, b.feedback_type, b.original_message_id])).toEqual([['complaint', 'arf', 'abuse', mail.messageId]]);
    expect(await suppressionOf('bob@dest.test')).toMatchObject({ reason: 'complaint', source_email_id: mail.id });
    const hooked = await eventually(async () => hooksFor(mail.id), (r) => r.length > 0, 10_000);
    expect(hooked.map((h) => [h.body.event, h.body.data.bounce.feedback_type])).toEqual([['email.complained', 'abuse']]);
    expect((await send('bob@dest.test')).status).toBe('suppressed');
  });

  test('a soft bounce (4.2.2 delayed) is recorded only: the email stays sent, no suppression, no event', async () => {
    const mail = await delivered('carol@dest.test');
    await report(mail.returnPath, dsn(mail.returnPath, 'carol@dest.test', mail.messageId, 'Action: delayed\nStatus: 4.2.2\nDiagnostic-Code: smtp; 452 4.2.2 mailbox full'));
    const [bounce] = await eventually(() => bouncesOf(mail.id), (b) => b.length > 0, 10_000);
    expect(bounce).toMatchObject({ type: 'soft', status: '4.2.2', smtp_code: 452 });
    expect((await emailOf(mail.id)).status).toBe('sent');
    expect(await suppressionOf('carol@dest.test')).toBeUndefined();
    expect(hooksFor(mail.id)).toEqual([]);
    expect((await send('carol@dest.test')).status).toBe('queued');
  });
});

describe('reports in a batch forward', () => {
  test('POST /relay/v1/inbound/batch: a DSN and a complaint in one batch are recorded as forwarded alone', async () => {
    const hard = await delivered('grace@dest.test');
    const complained = await delivered('heidi@dest.test');
    const pieces = [
      { to: hard.returnPath, raw: dsn(hard.returnPath, 'grace@dest.test', hard.messageId, 'Action: failed\nStatus: 5.1.1\nDiagnostic-Code: smtp; 550 5.1.1 no such user') },
      { to: complained.returnPath, raw: arf(complained.returnPath, 'heidi@dest.test', complained.bytes) },
    ].map(({ to, raw }) => inboundBody({ meta: inboundMeta([to], { mail_from: '' }), raw }));
    // The node's batch body: every meta, then every message (docs/relay-protocol.md).
    const metaLengths = pieces.map((p) => Number(p.headers['edgemail-meta-length']));
    const res = await fetch(`${stack.url}/relay/v1/inbound/batch`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${nodeToken}`, 'content-type': 'application/vnd.edgemail.inbound-batch',
        'edgemail-meta-lengths': metaLengths.join(','),
        'edgemail-message-lengths': pieces.map((p, i) => p.body.byteLength - metaLengths[i]!).join(','),
      },
      body: new Uint8Array(Buffer.concat([...pieces.map((p, i) => p.body.subarray(0, metaLengths[i])), ...pieces.map((p, i) => p.body.subarray(metaLengths[i]))])),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: { status: number; inbound_emails: unknown[] }[] }).results.map((r) => [r.status, r.inbound_emails])).toEqual([[200, []], [200, []]]);
    expect((await emailOf(hard.id)).status).toBe('bounced');
    expect((await emailOf(complained.id)).status).toBe('complained');
    expect((await bouncesOf(hard.id)).map((b) => b.type)).toEqual(['hard']);
    expect((await bouncesOf(complained.id)).map((b) => b.type)).toEqual(['complaint']);
  });
});

describe('what is ignored', () => {
  /** Waits until the edge has logged dropping the report sent to `to`, and answers that line. */
  const dropLine = (to: string) => eventually(async () => stack.logs().map((l) => l.message).find((t) => t.includes('dropped') && t.includes(to)), (t) => t !== undefined, 10_000);

  test('a forged DSN naming another project\'s email with a bad MAC changes nothing', async () => {
    const theirs = await delivered('dave@dest.test', otherSender, 'Globex <news@globex.test>');
    const [, idHex, mac] = RETURN_PATH.exec(theirs.returnPath)!;
    const erin = await delivered('erin@dest.test');
    const forged = [
      `bounce-${idHex}-${'0'.repeat(20)}@${BOUNCE_DOMAIN}`,
      // The MAC of another email's return path does not carry over.
      `bounce-${erin.id.replace(/-/g, '')}-${mac}@${BOUNCE_DOMAIN}`,
    ];
    for (const to of forged) {
      await report(to, dsn(to, 'dave@dest.test', theirs.messageId, 'Action: failed\nStatus: 5.1.1\nDiagnostic-Code: smtp; 550 5.1.1 user unknown'));
      expect(await dropLine(to)).toContain('bad MAC');
    }
    expect((await emailOf(theirs.id, otherSender)).status).toBe('sent');
    expect((await emailOf(erin.id)).status).toBe('sent');
    const { rows } = await stack.sql.query('SELECT id FROM bounces WHERE email_id = ANY($1::uuid[])', [[theirs.id, erin.id]]);
    expect(rows).toEqual([]);
    const { rows: suppressed } = await stack.sql.query(`SELECT 1 FROM suppressions WHERE address IN ('dave@dest.test', 'erin@dest.test')`);
    expect(suppressed).toEqual([]);
  });

  test('a message to a valid return path that is not a report is dropped, never stored as inbound mail', async () => {
    const inboundBefore = await inboundCount();
    const mail = await delivered('frank@dest.test');
    await report(mail.returnPath, crlf(`From: frank@dest.test\nTo: ${mail.returnPath}\nSubject: Out of office\n\nI am away until Monday.\n`));
    expect(await dropLine(mail.returnPath)).toContain('not a delivery-status or feedback report');
    // Ingest's own line says what became of it; the routes do not also call it mail for a domain no project proved.
    expect(stack.logs().filter((l) => l.message.includes(`no proven domain among ${BOUNCE_DOMAIN}`))).toEqual([]);
    expect(await bouncesOf(mail.id)).toEqual([]);
    expect((await emailOf(mail.id)).status).toBe('sent');
    expect(await inboundCount()).toBe(inboundBefore);
  });
});

describe('a refusal during delivery', () => {
  test('550 5.1.1 from the receiving server: the email failed, a hard bounce record of source smtp, the address suppressed', async () => {
    const email = await send('gone@dest.test');
    await untilStatus(email.id, 'failed');
    const [bounce] = await eventually(() => bouncesOf(email.id), (b) => b.length > 0, 5_000);
    expect(bounce).toMatchObject({ type: 'hard', source: 'smtp', smtp_code: 550, status: '5.1.1', recipient: 'gone@dest.test', diagnostic: `550 ${GONE_REPLY}` });
    expect(await suppressionOf('gone@dest.test')).toMatchObject({ reason: 'hard_bounce', source_email_id: email.id });
  });
});
