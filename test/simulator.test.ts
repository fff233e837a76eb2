// Simulator addresses (issue 17): delivered@, bounce@, complaint@ and defer@ at
// the simulator domain (`simulator.` + the host of server.public_url) go through the real pipeline: the send route, the queue, a real
// relay node's claim, the results statement, the bounce recorder, the
// suppressions and the webhook dispatcher, with nothing delivered. To show
// that, the node's DNS names a real SMTP receiver as the simulator domain's MX
// (private MX allowed): a job handed out would be delivered there, and the
// receiver must see no connection at all.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { startReceiver, type Receiver } from '../relay-node/test-support/receiver.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { enroll, type EnrolledNode } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const PUBLIC_HOST = 'mail.sim-test.example';
const SIM = `simulator.${PUBLIC_HOST}`;
const MAX_AGE_S = 4;

const env = useTenantStack({
  settings: {
    SERVICE_SERVER_PUBLIC_URL: `https://${PUBLIC_HOST}`,
    SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    // The project's own SMTP server of one test listens on loopback.
    SERVICE_SMTP_SERVERS_ALLOW_PRIVATE_TARGETS: 'true',
    SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000',
    SERVICE_OUTBOUND_RETRY_DELAY: '1s',
    // defer@ is retried until the send is this old, then fails as expired.
    SERVICE_OUTBOUND_MAX_AGE: `${MAX_AGE_S}s`,
  },
  keys: { sender: ['emails:write', 'emails:read'], manager: ['domains:write', 'relay:write', 'webhooks:write', 'smtpservers:write'] },
});

let dns: TestDnsServer;
let rx: Receiver;
let hooks: WebhookReceiver;
let node: RelayNode;
let enrolled: EnrolledNode;
let dir: string;
const logs: LogLine[] = [];

beforeAll(async () => {
  const domain = await env.stack.call('POST', '/api/v1/domains', { token: env.keys.manager, body: { name: 'acme.test' } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.body.domain.id]);

  hooks = await startWebhookReceiver();
  const webhook = await env.stack.call('POST', '/api/v1/webhooks', { token: env.keys.manager, body: { url: `${hooks.url}/hooks`, events: ['*'] } });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);

  rx = await startReceiver({ host: '127.0.0.1' });
  dns = await startDnsServer({ 'mx.sim.test': { A: ['127.0.0.1'] }, [SIM]: { MX: [{ preference: 10, exchange: 'mx.sim.test' }] } });
  enrolled = await enroll(env.stack, env.keys.manager, 'mx-simulator');
  dir = mkdtempSync(join(tmpdir(), 'simulator-'));
  await writeNodeState(dir, { edge_url: env.stack.url, node_id: enrolled.id, name: 'mx-simulator', token: enrolled.token, enrolled_at: new Date().toISOString() });
  node = await startTestNode({
    stack: env.stack, stateDir: dir, dnsAddress: dns.address, log: collectingLog(logs), hostName: 'relay.acme.test',
    env: {
      SERVICE_OUTBOUND_MX_PORT: String(rx.port), SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true', SERVICE_SMTP_SERVERS_ALLOW_PRIVATE_TARGETS: 'true',
      SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false',
    },
    outbound: { idlePollMs: 200, timeouts: { connectionMs: 1000, greetingMs: 1000, socketMs: 3000 } },
  });
});

afterAll(async () => {
  await node?.stop();
  await rx?.close();
  await hooks?.close();
  await dns?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function send(to: string, token = env.keys.sender) {
  const r = await env.stack.call('POST', '/api/v1/emails/send', {
    token, body: { from: 'Acme <news@acme.test>', to: [to], subject: `Simulated ${crypto.randomUUID().slice(0, 8)}`, text: 'Hello.' },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.emails[0] as { id: string; message_id: string; status: string };
}

const logged = async (id: string) => (await env.stack.call('GET', `/api/v1/emails/${id}`, { token: env.keys.sender })).body.email;
const untilStatus = (id: string, status: string) => eventually(() => logged(id), (e) => e?.status === status, 15_000);
/** The events delivered for one email, in the order they arrived. */
const eventsFor = (id: string) => hooks.received().filter((r) => r.body?.data?.id === id).map((r) => r.body);
const untilEvents = (id: string, n: number) => eventually(async () => eventsFor(id), (events) => events.length >= n, 15_000);
const bouncesOf = async (id: string) =>
  (await env.stack.sql.query('SELECT type::text, source, source_ref, smtp_code, status, diagnostic, remote_mta, feedback_type, original_message_id, recipient FROM bounces WHERE email_id = $1', [id])).rows;
const suppressionOf = async (address: string) =>
  (await env.stack.sql.query('SELECT reason::text, detail, source_email_id FROM suppressions WHERE project_id = $1 AND address = $2', [env.tenant.project.id, address])).rows[0];

describe('simulator addresses', () => {
  test('delivered@: sent (250 from the simulator), email.sent, nothing delivered', async () => {
    const email = await send(`delivered@${SIM}`);
    const entry = await untilStatus(email.id, 'sent');
    expect(entry).toMatchObject({
      attempts: 1, node_id: enrolled.id, error_message: null, sent_at: expect.any(String),
      smtp_reply: `250 2.0.0 <delivered@${SIM}>: accepted by the simulator (nothing was delivered)`,
      delivery_attempts: [{ attempt: 1, outcome: 'sent', smtp_code: 250, server: 'simulator', node_id: enrolled.id, duration_ms: 0 }],
    });
    const [event] = await untilEvents(email.id, 1);
    expect(event).toMatchObject({ event: 'email.sent', data: { id: email.id, status: 'sent', recipients: [`delivered@${SIM}`], attempts: 1 } });
    expect(await bouncesOf(email.id)).toEqual([]);
    expect(await suppressionOf(`delivered@${SIM}`)).toBeUndefined();
  });

  test('bounce@: accepted, then a hard bounce comes back: bounced, a bounce record, the address suppressed, email.sent then email.bounced', async () => {
    const email = await send(`bounce@${SIM}`);
    const diagnostic = `smtp; 550 5.1.1 <bounce@${SIM}>: simulated hard bounce (no such user)`;
    const entry = await untilStatus(email.id, 'bounced');
    expect(entry).toMatchObject({ attempts: 1, error_message: diagnostic, delivery_attempts: [{ outcome: 'sent', smtp_code: 250, server: 'simulator' }] });
    expect(await bouncesOf(email.id)).toEqual([{
      type: 'hard', source: 'simulator', source_ref: `simulator:${email.id}`, smtp_code: 550, status: '5.1.1', diagnostic,
      remote_mta: SIM, feedback_type: null, original_message_id: entry.message_id_header, recipient: `bounce@${SIM}`,
    }]);
    expect(await suppressionOf(`bounce@${SIM}`)).toEqual({ reason: 'hard_bounce', detail: diagnostic, source_email_id: email.id });

    const events = await untilEvents(email.id, 2);
    expect(events.map((e) => e.event)).toEqual(['email.sent', 'email.bounced']);
    expect(events[1]).toMatchObject({
      data: { id: email.id, status: 'bounced', error_message: diagnostic, bounce: { type: 'hard', source: 'simulator', smtp_code: 550, status: '5.1.1', diagnostic } },
    });

    // The next send to the address is refused as suppressed; a +label is another address.
    expect((await send(`bounce@${SIM}`)).status).toBe('suppressed');
    const labelled = await send(`bounce+second@${SIM}`);
    expect(labelled.status).toBe('queued');
    await untilStatus(labelled.id, 'bounced');
  });

  test('complaint@: accepted, then a complaint: complained, a complaint record, the address suppressed, email.sent then email.complained', async () => {
    const email = await send(`complaint@${SIM}`);
    const entry = await untilStatus(email.id, 'complained');
    expect(entry).toMatchObject({ attempts: 1, error_message: null, delivery_attempts: [{ outcome: 'sent', smtp_code: 250, server: 'simulator' }] });
    expect(await bouncesOf(email.id)).toEqual([{
      type: 'complaint', source: 'simulator', source_ref: `simulator:${email.id}`, smtp_code: null, status: null, diagnostic: null,
      remote_mta: SIM, feedback_type: 'abuse', original_message_id: entry.message_id_header, recipient: `complaint@${SIM}`,
    }]);
    expect(await suppressionOf(`complaint@${SIM}`)).toEqual({ reason: 'complaint', detail: 'abuse', source_email_id: email.id });
    const events = await untilEvents(email.id, 2);
    expect(events.map((e) => e.event)).toEqual(['email.sent', 'email.complained']);
    expect(events[1]).toMatchObject({ data: { id: email.id, status: 'complained', bounce: { type: 'complaint', source: 'simulator', feedback_type: 'abuse' } } });
  });

  test('bounce@: the result and its bounce commit together: while the bounce cannot be written the email stays unsettled, then bounces once it can', async () => {
    // A trigger refuses this recipient's bounce row, as a Worker dying between two writes would leave it unwritten. The
    // sequence (not rolled back with the transaction) shows the edge got as far as writing it.
    const recipient = `bounce+atomic@${SIM}`;
    await env.stack.sql.query(`
      CREATE SEQUENCE test_refused_bounces;
      CREATE FUNCTION test_refuse_bounce() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM nextval('test_refused_bounces'); RAISE EXCEPTION 'bounce refused by the test'; END $$;
      CREATE TRIGGER test_refuse_bounce BEFORE INSERT ON bounces FOR EACH ROW
        WHEN (NEW.recipient = '${recipient}') EXECUTE FUNCTION test_refuse_bounce();`);
    try {
      const email = await send(recipient);
      await eventually(async () => (await env.stack.sql.query('SELECT last_value, is_called FROM test_refused_bounces')).rows[0],
        (r) => r.is_called, 15_000);
      // Not sent without its bounce: no attempt recorded, no email.sent, back in the queue to be settled again.
      const waiting = await logged(email.id);
      expect(['queued', 'sending']).toContain(waiting.status);
      expect(waiting.delivery_attempts).toEqual([]);
      expect(await bouncesOf(email.id)).toEqual([]);
      expect(eventsFor(email.id)).toEqual([]);
    } finally {
      await env.stack.sql.query('DROP TRIGGER test_refuse_bounce ON bounces; DROP FUNCTION test_refuse_bounce(); DROP SEQUENCE test_refused_bounces;');
    }
    const email = (await env.stack.sql.query('SELECT id FROM emails WHERE recipient = $1', [recipient])).rows[0] as { id: string };
    const entry = await untilStatus(email.id, 'bounced');
    expect(entry).toMatchObject({ attempts: 1, delivery_attempts: [{ attempt: 1, outcome: 'sent', server: 'simulator' }] });
    expect((await bouncesOf(email.id)).map((b) => [b.type, b.source_ref])).toEqual([['hard', `simulator:${email.id}`]]);
    expect((await untilEvents(email.id, 2)).map((e) => e.event)).toEqual(['email.sent', 'email.bounced']);
  });

  test(`defer@: 451 at every try, retried with the backoff, then failed as expired after outbound.max_age (${MAX_AGE_S}s) with email.failed`, async () => {
    const email = await send(`defer@${SIM}`);
    const reply = `451 4.4.1 <defer@${SIM}>: simulated deferral (the simulator always defers <defer@${SIM}>; tried again later)`;
    // Deferred and queued again (no event for a deferral).
    const waiting = await eventually(() => logged(email.id), (e) => e?.delivery_attempts?.length >= 1 && e.status === 'queued', 15_000);
    expect(waiting).toMatchObject({ smtp_reply: reply, delivery_attempts: [{ attempt: 1, outcome: 'deferred', smtp_code: 451, reply, server: 'simulator' }] });
    expect(eventsFor(email.id)).toEqual([]);

    const failed = await untilStatus(email.id, 'failed');
    expect(failed.attempts).toBeGreaterThanOrEqual(2);
    expect(failed.delivery_attempts.every((a: any) => a.outcome === 'deferred' && a.smtp_code === 451)).toBe(true);
    expect(failed.error_message).toMatch(new RegExp(`^expired after \\d+s: ${reply.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
    const [event] = await untilEvents(email.id, 1);
    expect(event).toMatchObject({ event: 'email.failed', data: { id: email.id, status: 'failed', error_message: failed.error_message } });
    // A deferral is not a bounce.
    expect(await bouncesOf(email.id)).toEqual([]);
    expect(await suppressionOf(`defer@${SIM}`)).toBeUndefined();
  });

  test('another mailbox of the simulator domain: failed 550 5.1.1 naming the four, email.failed, suppressed as a hard bounce', async () => {
    const email = await send(`bounced@${SIM}`);
    const reply = `550 5.1.1 <bounced@${SIM}>: no such simulator address (delivered, bounce, complaint or defer, each with an optional +label)`;
    const entry = await untilStatus(email.id, 'failed');
    expect(entry).toMatchObject({ error_message: reply, delivery_attempts: [{ outcome: 'failed', smtp_code: 550, reply, server: 'simulator' }] });
    const [event] = await untilEvents(email.id, 1);
    expect(event).toMatchObject({ event: 'email.failed', data: { error_message: reply } });
    expect((await suppressionOf(`bounced@${SIM}`))?.reason).toBe('hard_bounce');
  });

  test('a sandbox key\'s send to a simulator address is captured like any sandbox send: no claim, no attempt, no event', async () => {
    const sandbox = (await env.tenant.key(['sandbox:write', 'emails:read'], { sandbox: true })).token;
    const email = await send(`bounce+sandbox@${SIM}`, sandbox);
    expect(email.status).toBe('captured');
    const delivered = await send(`delivered+after-sandbox@${SIM}`);
    await untilStatus(delivered.id, 'sent');
    expect(await logged(email.id)).toMatchObject({ status: 'captured', attempts: 0, delivery_attempts: [] });
    expect(eventsFor(email.id)).toEqual([]);
  });

  test('a project relaying through its own SMTP server: simulator addresses still never reach it', async () => {
    const server = await env.stack.call('POST', '/api/v1/smtp-servers', {
      token: env.keys.manager, body: { name: 'own relay', host: '127.0.0.1', port: rx.port, security: 'none' },
    });
    expect(server.status, JSON.stringify(server.body)).toBe(201);
    const email = await send(`delivered+relay@${SIM}`);
    expect(await untilStatus(email.id, 'sent')).toMatchObject({ delivery_attempts: [{ outcome: 'sent', server: 'simulator' }] });
  });

  test('nothing was handed to the node: the MX the simulator domain names (and the project\'s own server) saw no connection', () => {
    expect(rx.connections).toBe(0);
    expect(rx.messages).toEqual([]);
    expect(logs.filter((l) => /outbound message (delivered|deferred|failed)/.test(l.message))).toEqual([]);
  });
});
