// Outbound mail end to end (issue 9, "Delivery on relay nodes"): real relay
// nodes from relay-node/ against the real edge, a DNS server with MX and DKIM
// records, a receiving SMTP server on loopback (smtp-server) that records what
// arrived and answers 4xx/5xx/nothing per recipient, DKIM checked on the
// bytes that arrived with mailauth, webhooks received over HTTP.
import { spawn, type ChildProcess } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { verifyWebhook } from '@edgemail/shared';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { repoRoot } from '../edge/local/edge-worker.js';
import type { RelayNode, RelayNodeOutboundOptions } from '../relay-node/src/index.js';
import { startSilentServer, testCertificate } from '../relay-node/test-support/receiver.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import type * as MailauthModule from '../relay-node/node_modules/mailauth/index.js';
import type * as SmtpServerModule from '../relay-node/node_modules/smtp-server/dist/cjs/smtp-server.js';
import { freePort } from './support/global-setup.js';
import { enroll, type EnrolledNode } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

// smtp-server and mailauth are the relay node's dependencies, not the test package's.
const fromRelayNode = createRequire(new URL('../relay-node/package.json', import.meta.url));
const { SMTPServer } = fromRelayNode('smtp-server') as typeof SmtpServerModule;
const { authenticate } = fromRelayNode('mailauth') as typeof MailauthModule;

const LEASE_S = 6;
const SETTINGS = {
  SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
  SERVICE_OUTBOUND_RETRY_DELAY: '1s',
  SERVICE_OUTBOUND_LEASE: `${LEASE_S}s`,
  // Nodes here claim every 200 ms; the chatter limit is not under test.
  SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000',
};
const OUTBOUND: RelayNodeOutboundOptions = {
  idlePollMs: 200,
  concurrency: 4,
  timeouts: { connectionMs: 1000, greetingMs: 1000, socketMs: 3000 },
  stopTimeoutMs: 3000,
};

// ---- the receiving SMTP server ---------------------------------------------------------------

/** One message that reached the end of DATA. */
interface Arrival { rcpt: string; mailFrom: string; bytes: Buffer; messageId: string; secure: boolean; helo: string }
type RcptAnswer = 'accept' | 'hang' | { code: number; text: string };

interface SmtpReceiver {
  readonly port: number;
  /** Messages answered 250: delivered. */
  readonly arrivals: Arrival[];
  /** Messages whose sender hung up before the reply to DATA: not taken (RFC 5321 4.1.1.4). */
  readonly dropped: Arrival[];
  /** How to answer RCPT TO, given the address and how many times it was asked for (1 first). */
  onRcpt: (address: string, times: number) => RcptAnswer;
  /** Holds the reply to DATA until the promise settles (or the client hangs up); null answers at once. */
  holdData: (arrival: Arrival) => Promise<void> | null;
  close(): Promise<void>;
}

async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const asked = new Map<string, number>();
  const closedSessions = new Set<string>();
  const onSessionClose = new Map<string, () => void>();
  const tls = testCertificate();
  const receiver = {
    port: 0,
    arrivals: [] as Arrival[],
    dropped: [] as Arrival[],
    onRcpt: (() => 'accept') as SmtpReceiver['onRcpt'],
    holdData: (() => null) as SmtpReceiver['holdData'],
  };
  const server = new SMTPServer({
    logger: false,
    disableReverseLookup: true,
    authOptional: true,
    disabledCommands: ['AUTH'],
    key: tls.key,
    cert: tls.cert,
    onRcptTo(address, _session, callback) {
      const key = address.address.toLowerCase();
      const times = (asked.get(key) ?? 0) + 1;
      asked.set(key, times);
      const answer = receiver.onRcpt(address.address, times);
      if (answer === 'hang') return; // never answered
      if (answer === 'accept') return callback();
      callback(Object.assign(new Error(answer.text), { responseCode: answer.code }));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        const bytes = Buffer.concat(chunks);
        const arrival: Arrival = {
          rcpt: session.envelope.rcptTo[0]?.address ?? '',
          mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          bytes,
          messageId: /^Message-ID:\s*(<[^>\r\n]+>)/im.exec(bytes.toString('latin1'))?.[1] ?? '',
          secure: session.secure,
          helo: session.hostNameAppearsAs,
        };
        const hold = receiver.holdData(arrival);
        if (hold) await Promise.race([hold, new Promise<void>((resolve) => onSessionClose.set(session.id, resolve))]);
        if (closedSessions.has(session.id)) {
          receiver.dropped.push(arrival);
          return;
        }
        receiver.arrivals.push(arrival);
        callback(null, `2.0.0 Ok: queued as ${receiver.arrivals.length}`);
      });
    },
    onClose(session) {
      closedSessions.add(session.id);
      onSessionClose.get(session.id)?.();
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.on('error', () => undefined);
  receiver.port = (server.server.address() as AddressInfo).port;
  return Object.assign(receiver, {
    close: () => new Promise<void>((resolve) => {
      for (const c of (server as unknown as { connections: Set<{ close(): void }> }).connections) c.close();
      server.close(() => resolve());
    }),
  });
}

// ---- the stack, the DNS, the nodes -----------------------------------------------------------

let stack: TestStack;
let dns: TestDnsServer;
let rx: SmtpReceiver;
let silent: Awaited<ReturnType<typeof startSilentServer>>;
let hooks: WebhookReceiver;
let webhookSecret: string;
let sender: string;
let sandboxKey: string;
let projectId: string;
let nodeA: EnrolledNode;
let nodeB: EnrolledNode;
let nodeC: EnrolledNode;
const dirs: Record<string, string> = {};
const running = new Map<string, RelayNode>();
const logs: LogLine[] = [];
const log = collectingLog(logs);

/** Starts (in this process) the enrolled node whose state is in `dirs[name]`. */
async function startNode(name: 'a' | 'b'): Promise<RelayNode> {
  const node = await startTestNode({
    stack, stateDir: dirs[name]!, dnsAddress: dns.address, log, hostName: `relay-${name}.acme.test`,
    // The recipients' MX hosts and the project's own SMTP server of the last test listen on loopback.
    env: {
      SERVICE_OUTBOUND_MX_PORT: String(rx.port), SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false',
      SERVICE_SMTP_SERVERS_ALLOW_PRIVATE_TARGETS: 'true', SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true',
      // The EHLO name it delivers with (else the edge's address as a literal, [127.0.0.1]).
      SERVICE_OUTBOUND_HELO_NAME: `relay-${name}.acme.test`,
    },
    outbound: OUTBOUND,
  });
  running.set(name, node);
  return node;
}

async function stopNode(name: string): Promise<void> {
  await running.get(name)?.stop();
  running.delete(name);
}

async function enrolledIn(name: string, key: string): Promise<EnrolledNode> {
  const enrolled = await enroll(stack, key, `mx-${name}`);
  dirs[name] = mkdtempSync(join(tmpdir(), `outbound-e2e-${name}-`));
  await writeNodeState(dirs[name]!, { edge_url: stack.url, node_id: enrolled.id, name: `mx-${name}`, token: enrolled.token, enrolled_at: new Date().toISOString() });
  return enrolled;
}

beforeAll(async () => {
  stack = await startTestStack({ settings: SETTINGS });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'outbound-e2e');
  projectId = tenant.project.id;
  sender = (await tenant.key(['emails:write', 'emails:read', 'suppressions:read'])).token;
  sandboxKey = (await tenant.key(['sandbox:write'], { sandbox: true })).token;
  const manager = (await tenant.key(['domains:write', 'relay:write', 'webhooks:write'])).token;

  rx = await startSmtpReceiver();
  // A mail host that accepts the connection and never says a word, on the same port (outbound.mx_port is one for all).
  silent = await startSilentServer('127.0.0.2', rx.port);
  hooks = await startWebhookReceiver();
  dns = await startDnsServer({
    'mx.dest.test': { A: ['127.0.0.1'] },
    'dest.test': { MX: [{ preference: 10, exchange: 'mx.dest.test' }] },
    'mx.silent.test': { A: ['127.0.0.2'] },
    'silent.test': { MX: [{ preference: 10, exchange: 'mx.silent.test' }] },
    // The bounce domain's SPF, as docs/bounces.md tells the operator to publish it (MAIL FROM is the VERP return path there).
    'bounces.mail.example.com': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
  });

  // acme.test: registered (an RSA key made by the edge), its records published in the node's DNS, verified.
  const domain = await stack.call('POST', '/api/v1/domains', { token: manager, body: { name: 'acme.test' } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  for (const record of domain.body.domain.dns_records as { type: string; name: string; value: string; purpose: string }[]) {
    if (record.purpose === 'dkim' || record.purpose === 'spf') dns.set(record.name, { TXT: [record.value.replace(/include:\S+/, 'ip4:127.0.0.1')] });
  }
  await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.body.domain.id]);

  const webhook = await stack.call('POST', '/api/v1/webhooks', { token: manager, body: { url: `${hooks.url}/edgemail`, events: ['email.sent', 'email.failed'] } });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
  webhookSecret = webhook.body.secret ?? webhook.body.webhook.secret;

  nodeA = await enrolledIn('a', manager);
  nodeB = await enrolledIn('b', manager);
  nodeC = await enrolledIn('c', manager);
  await startNode('a');
});

afterAll(async () => {
  await Promise.all([...running.keys()].map(stopNode));
  await rx?.close();
  await silent?.close();
  await hooks?.close();
  await dns?.close();
  await stack?.stop();
  for (const dir of Object.values(dirs)) rmSync(dir, { recursive: true, force: true });
});

// ---- helpers -----------------------------------------------------------------------------------

async function send(body: Record<string, unknown>, token = sender): Promise<{ message_id: string; emails: { id: string; recipient: string; status: string }[] }> {
  const r = await stack.call('POST', '/api/v1/emails/send', {
    token, body: { from: 'Acme News <news@acme.test>', subject: `Hello ${crypto.randomUUID().slice(0, 8)}`, text: 'Hello there.', ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

const logEntry = async (id: string) => {
  const r = await stack.call('GET', `/api/v1/emails/${id}`, { token: sender });
  expect(r.status).toBe(200);
  return r.body.email;
};

/** Waits for the recipient to reach `status` in the log, and answers its record. */
const untilStatus = (id: string, status: string, timeoutMs = 15_000) =>
  eventually(() => logEntry(id), (e) => e.status === status, timeoutMs);

const arrivalsOf = (messageId: string) => rx.arrivals.filter((a) => a.messageId === `<${messageId}@acme.test>`);

/** The webhook deliveries received for one email row. */
const hooksFor = (emailId: string) => hooks.received().filter((r) => r.body?.data?.id === emailId);

/** mailauth's verdict on the bytes as they arrived (DNS from the test server, as receivers would ask it). */
async function verifyArrival(arrival: Arrival) {
  const resolver = new Resolver();
  resolver.setServers([dns.address]);
  return authenticate(arrival.bytes, {
    ip: '127.0.0.1', helo: arrival.helo, sender: arrival.mailFrom, mta: 'mx.dest.test',
    resolver: (name: string, rr: string) => resolver.resolve(name, rr) as never,
  });
}

// ---- the tests ---------------------------------------------------------------------------------

describe('delivery by relay nodes', () => {
  test('a send is delivered once to the recipient\'s MX, DKIM-signed (mailauth verifies it), logged as sent, and email.sent arrives', async () => {
    const sent = await send({
      to: ['Ann <ann@dest.test>'], html: '<p>Your order shipped</p>', headers: { 'X-Order-Id': 'A-1042' },
      attachments: [{ filename: 'note.txt', content: Buffer.from('thank you').toString('base64') }],
    });
    const id = sent.emails[0]!.id;
    const entry = await untilStatus(id, 'sent');
    expect(entry).toMatchObject({
      attempts: 1, node_id: nodeA.id, error_message: null, smtp_reply: expect.stringMatching(/^250 2\.0\.0 Ok: queued as \d+$/),
      sent_at: expect.any(String), headers: { 'X-Order-Id': 'A-1042' },
      delivery_attempts: [{ attempt: 1, outcome: 'sent', smtp_code: 250, reply: entry.smtp_reply, server: `mx.dest.test:${rx.port}`, node_id: nodeA.id, started_at: expect.any(String), duration_ms: expect.any(Number) }],
    });

    const arrived = arrivalsOf(sent.message_id);
    expect(arrived).toHaveLength(1);
    const [message] = arrived;
    // Issue 17: MAIL FROM is the email's VERP return path (docs/bounces.md); the From header stays the sender's.
    expect(message).toMatchObject({
      rcpt: 'ann@dest.test', mailFrom: expect.stringMatching(new RegExp(`^bounce-${id.replace(/-/g, '')}-[0-9a-f]{20}@bounces\\.mail\\.example\\.com$`)),
      secure: true, helo: 'relay-a.acme.test',
    });
    expect(message!.bytes.toString('utf8')).toMatch(/^From: Acme News <news@acme\.test>\r?$/m);
    const text = message!.bytes.toString('utf8');
    // Header names are case-insensitive; nodemailer writes this one `X-Order-ID`.
    expect(text).toMatch(/^X-Order-Id: A-1042\r?$/im);
    expect(text).toContain('filename=note.txt');
    expect(text).toContain(Buffer.from('thank you').toString('base64'));
    expect(text).not.toMatch(/^Bcc:/im);

    const verdict = await verifyArrival(message!);
    const dkim = verdict.dkim.results[0] as { status: { result: string }; signingDomain: string; selector: string; signingHeaders?: { keys: string } };
    expect(dkim.status.result).toBe('pass');
    expect(dkim.signingDomain).toBe('acme.test');
    expect(dkim.signingHeaders?.keys.toLowerCase()).toContain('x-order-id');
    expect(verdict.spf && (verdict.spf as { status: { result: string } }).status.result).toBe('pass');

    const [hook] = await eventually(async () => hooksFor(id), (r) => r.length > 0);
    expect(hook!.body).toMatchObject({
      event: 'email.sent',
      data: { id, project_id: projectId, sender: 'news@acme.test', recipients: ['ann@dest.test'], subject: entry.subject, status: 'sent', attempts: 1 },
    });
    expect(hook!.body.data).not.toHaveProperty('error_message');
    const signed = await verifyWebhook({
      secret: webhookSecret, rawBody: new Uint8Array(hook!.raw),
      timestamp: hook!.headers['x-service-timestamp'] as string, signature: hook!.headers['x-service-signature'] as string,
    });
    expect(signed.ok).toBe(true);
  });

  test('4xx then 250: deferred, then sent on the retry; both attempts in the log', async () => {
    rx.onRcpt = (address, times) => (address === 'grey@dest.test' && times === 1 ? { code: 451, text: '4.7.1 greylisted, come back later' } : 'accept');
    const sent = await send({ to: ['grey@dest.test'] });
    const entry = await untilStatus(sent.emails[0]!.id, 'sent');
    expect(entry.attempts).toBe(2);
    expect(entry.delivery_attempts.map((a: { attempt: number; outcome: string; smtp_code: number; reply: string }) => [a.attempt, a.outcome, a.smtp_code, a.reply])).toEqual([
      [1, 'deferred', 451, '451 4.7.1 greylisted, come back later'],
      [2, 'sent', 250, entry.smtp_reply],
    ]);
    // The retry waited for outbound.retry_delay (1 s).
    const [first, second] = entry.delivery_attempts;
    expect(Date.parse(second.started_at) - Date.parse(first.started_at)).toBeGreaterThanOrEqual(900);
    expect(arrivalsOf(sent.message_id)).toHaveLength(1);
    // A deferral is no event: only the final email.sent.
    await eventually(async () => hooksFor(sent.emails[0]!.id), (r) => r.length > 0);
    expect(hooksFor(sent.emails[0]!.id).map((r) => r.body.event)).toEqual(['email.sent']);
  });

  test('5xx: failed with the server\'s reply; a hard bounce suppresses the address and the next send to it is suppressed', async () => {
    const reply = '5.1.1 <nobody@dest.test>: Recipient address rejected: User unknown in local recipient table';
    rx.onRcpt = (address) => (address === 'nobody@dest.test' ? { code: 550, text: reply } : 'accept');
    const sent = await send({ to: ['nobody@dest.test'] });
    const id = sent.emails[0]!.id;
    const entry = await untilStatus(id, 'failed');
    expect(entry).toMatchObject({ attempts: 1, error_message: `550 ${reply}`, smtp_reply: `550 ${reply}`, node_id: nodeA.id, sent_at: null });
    expect(arrivalsOf(sent.message_id)).toEqual([]);

    const [hook] = await eventually(async () => hooksFor(id), (r) => r.length > 0);
    expect(hook!.body).toMatchObject({
      event: 'email.failed',
      data: { id, project_id: projectId, sender: 'news@acme.test', recipients: ['nobody@dest.test'], status: 'failed', attempts: 1, error_message: `550 ${reply}` },
    });

    const suppressions = await stack.call('GET', '/api/v1/suppressions', { token: sender });
    expect(suppressions.body.suppressions).toContainEqual(expect.objectContaining({ address: 'nobody@dest.test', reason: 'hard_bounce' }));
    const again = await send({ to: ['nobody@dest.test', 'somebody@dest.test'] });
    expect(again.emails.map((e) => [e.recipient, e.status])).toEqual([['nobody@dest.test', 'suppressed'], ['somebody@dest.test', 'queued']]);
    await untilStatus(again.emails[1]!.id, 'sent');
    expect(arrivalsOf(again.message_id).map((a) => a.rcpt)).toEqual(['somebody@dest.test']);
  });

  test('a mail host that never answers: deferred, naming the silence, and tried again', async () => {
    const sent = await send({ to: ['quiet@silent.test'] });
    const id = sent.emails[0]!.id;
    const entry = await eventually(() => logEntry(id), (e) => e.delivery_attempts.length >= 2, 20_000);
    expect(entry.status).not.toBe('failed');
    expect(entry.delivery_attempts[0]).toMatchObject({
      attempt: 1, outcome: 'deferred', smtp_code: null, server: `mx.silent.test:${rx.port}`, node_id: nodeA.id,
      reply: expect.stringMatching(/^no answer from mx\.silent\.test within 1000 ms/),
    });
    expect(entry.error_message).toBeNull();
    expect(silent.sockets.length).toBeGreaterThanOrEqual(2);
    // Parked: it would be retried for outbound.max_age otherwise.
    await stack.sql.query(`UPDATE emails SET status = 'failed', error_message = 'parked by the test', next_attempt_at = NULL, lease_node_id = NULL WHERE id = $1`, [id]);
  });

  test('a sandbox send is never claimed: it stays captured and reaches no server', async () => {
    const sent = await send({ to: ['sandbox@dest.test'] }, sandboxKey);
    expect(sent.emails[0]!.status).toBe('captured');
    // Several claim rounds of the running node.
    await new Promise((r) => setTimeout(r, 1500));
    expect(await logEntry(sent.emails[0]!.id)).toMatchObject({ status: 'captured', attempts: 0, delivery_attempts: [], node_id: null });
    expect(rx.arrivals.filter((a) => a.rcpt === 'sandbox@dest.test')).toEqual([]);
  });

  test('two relay nodes drain one queue of 40 recipients: each arrives exactly once', async () => {
    // A slow receiver, so that both nodes are busy at once.
    rx.holdData = (arrival) => (arrival.rcpt.startsWith('bulk-') ? new Promise((r) => setTimeout(r, 150)) : null);
    await startNode('b');
    try {
      const messages = await Promise.all([0, 1].map((m) => send({ to: Array.from({ length: 20 }, (_, i) => `bulk-${m}-${i}@dest.test`) })));
      const ids = messages.flatMap((m) => m.emails.map((e) => e.id));
      await eventually(
        async () => (await stack.sql.query(`SELECT count(*)::int AS n FROM emails WHERE id = ANY($1) AND status = 'sent'`, [ids])).rows[0].n,
        (n) => n === 40, 30_000);
      const arrived = messages.flatMap((m) => arrivalsOf(m.message_id));
      const keys = arrived.map((a) => `${a.messageId} ${a.rcpt}`);
      expect(keys).toHaveLength(40);
      expect(new Set(keys).size).toBe(40);
      const { rows } = await stack.sql.query(
        `SELECT node_id, count(*)::int AS n, sum(attempts)::int AS attempts FROM emails WHERE id = ANY($1) GROUP BY node_id`, [ids]);
      const byNode = new Map(rows.map((r) => [r.node_id, r]));
      expect([...byNode.keys()].sort()).toEqual([nodeA.id, nodeB.id].sort());
      expect(rows.reduce((n, r) => n + r.attempts, 0)).toBe(40);
      const attempts = await stack.sql.query('SELECT count(*)::int AS n FROM email_attempts WHERE email_id = ANY($1)', [ids]);
      expect(attempts.rows[0].n).toBe(40);
    } finally {
      rx.holdData = () => null;
      await stopNode('b');
    }
  });

  test('a node killed mid-delivery: its lease runs out, another node delivers, the message arrives once; the dead node\'s late result would be stale', async () => {
    await stopNode('a');
    let child: ChildProcess | undefined;
    let output = '';
    let heldResolve!: () => void;
    const held = new Promise<void>((resolve) => (heldResolve = resolve));
    // The receiver has the whole message and keeps the reply to DATA back.
    rx.holdData = (arrival) => {
      if (arrival.rcpt !== 'held@dest.test') return null;
      heldResolve();
      return new Promise<void>(() => undefined);
    };
    try {
      child = spawn(process.execPath, ['--import', 'tsx', 'edge/cli/main.ts', 'relay', 'start', '--state-dir', dirs.c!, '--port', String(await freePort()), '--submission-port', '0', '--host', '127.0.0.1'], {
        cwd: repoRoot,
        env: {
          ...process.env, SERVICE_SERVER_PUBLIC_URL: stack.url, SERVICE_DNS_SERVERS: dns.address, SERVICE_OUTBOUND_MX_PORT: String(rx.port),
          SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false', SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      child.stdout!.on('data', (d) => (output += d));
      child.stderr!.on('data', (d) => (output += d));
      const exited = new Promise<NodeJS.Signals | number | null>((resolve) => child!.on('exit', (code, signal) => resolve(signal ?? code)));

      const sent = await send({ to: ['held@dest.test'] });
      const id = sent.emails[0]!.id;
      await Promise.race([held, new Promise((_, reject) => setTimeout(() => reject(new Error(`the child node never delivered: ${output}`)), 30_000))]);
      const { rows: [leased] } = await stack.sql.query('SELECT status, attempts, lease_node_id, next_attempt_at AS lease_until FROM emails WHERE id = $1', [id]);
      expect(leased).toMatchObject({ status: 'sending', attempts: 1, lease_node_id: nodeC.id });

      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      // The receiver saw the client go before it answered DATA: the message was not taken.
      await eventually(async () => rx.dropped.filter((a) => a.rcpt === 'held@dest.test').length, (n) => n === 1);
      rx.holdData = () => null;

      await startNode('a');
      const entry = await untilStatus(id, 'sent', 30_000);
      // Not before the dead node's lease ran out.
      expect(Date.parse(entry.delivery_attempts[0].started_at)).toBeGreaterThanOrEqual((leased.lease_until as Date).getTime());
      expect(entry).toMatchObject({ attempts: 2, node_id: nodeA.id });
      // Attempt 1 was never reported (its node died); attempt 2 was.
      expect(entry.delivery_attempts.map((a: { attempt: number; outcome: string; node_id: string }) => [a.attempt, a.outcome, a.node_id])).toEqual([[2, 'sent', nodeA.id]]);
      expect(arrivalsOf(sent.message_id)).toHaveLength(1);

      // Had the dead node's DATA completed and its report come late, it would have changed nothing.
      const late = await stack.call('POST', '/relay/v1/outbound/results', {
        token: nodeC.token,
        body: { results: [{ email_id: id, attempt: 1, outcome: 'sent', smtp_code: 250, reply: '250 late', server: `mx.dest.test:${rx.port}`, started_at: new Date().toISOString(), duration_ms: 5 }] },
      });
      expect(late.body).toEqual({ accepted: [], stale: [id] });
      expect((await logEntry(id)).delivery_attempts).toHaveLength(1);
    } finally {
      rx.holdData = () => null;
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      if (!running.has('a')) await startNode('a');
    }
  });

  test('the project\'s own SMTP server takes its mail instead of the recipient\'s MX', async () => {
    const { rows: [server] } = await stack.sql.query(
      `INSERT INTO smtp_servers (project_id, name, host, port, security) VALUES ($1, 'own relay', '127.0.0.1', $2, 'none') RETURNING id`, [projectId, rx.port]);
    try {
      // nomx.test has no DNS records at all: by MX it could not be delivered.
      const sent = await send({ to: ['someone@nomx.test'] });
      const entry = await untilStatus(sent.emails[0]!.id, 'sent');
      expect(entry.delivery_attempts[0].server).toBe(`127.0.0.1:${rx.port}`);
      const [arrived] = arrivalsOf(sent.message_id);
      expect(arrived).toMatchObject({ rcpt: 'someone@nomx.test', secure: false });
      expect((await verifyArrival(arrived!)).dkim.results[0]).toMatchObject({ status: { result: 'pass' } });
    } finally {
      await stack.sql.query('DELETE FROM smtp_servers WHERE id = $1', [server.id]);
    }
  });
});
