// Issue 13, item 1, end to end: a tenant whose recipient domain points its MX
// (or, without MX, its A/AAAA) into private space cannot make a relay node
// connect there. A real relay node on the real edge, a DNS server serving the
// tenant's records, and real SMTP receivers listening on the loopback
// addresses those records name (outbound.mx_port points at them). With
// outbound.allow_private_mx at its default, the email log fails each recipient
// naming the rule and the receivers see no connection; a node with the
// setting on delivers to the very same receiver, so the refusal is the rule's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { startReceiver, type Receiver } from '../relay-node/test-support/receiver.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { enroll } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const RULE = 'relay nodes deliver only to public addresses unless outbound.allow_private_mx is set';

let stack: TestStack;
let dns: TestDnsServer;
let v4: Receiver;
let v6: Receiver;
let sender: string;
let manager: string;
let node: RelayNode | null = null;
const dirs: string[] = [];
const logs: LogLine[] = [];

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_OUTBOUND_RETRY_DELAY: '1s', SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000' } });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'private-mx');
  sender = (await tenant.key(['emails:write', 'emails:read'])).token;
  manager = (await tenant.key(['domains:write', 'relay:write'])).token;
  const domain = await stack.call('POST', '/api/v1/domains', { token: manager, body: { name: 'acme.test' } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.body.domain.id]);

  // An "internal" mail server on loopback, v4 and v6, one port (outbound.mx_port is one for all).
  v4 = await startReceiver({ host: '127.0.0.1' });
  v6 = await startReceiver({ host: '::1', port: v4.port });
  dns = await startDnsServer({
    'internal.host': { A: ['127.0.0.1'] },
    'mx-internal.test': { MX: [{ preference: 10, exchange: 'internal.host' }] },
    'a10.test': { A: ['10.1.2.3'] },
    'a127.test': { A: ['127.0.0.1'] },
    'a169.test': { A: ['169.254.169.254'] },
    'aaaa-loopback.test': { AAAA: ['::1'] },
    'aaaa-ula.test': { AAAA: ['fc00::25'] },
  });
});

afterAll(async () => {
  await node?.stop();
  await v4?.close();
  await v6?.close();
  await dns?.close();
  await stack?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A freshly enrolled node of the tenant's project, started with `env` over the test defaults. */
async function startNode(env: Record<string, string>): Promise<RelayNode> {
  const enrolled = await enroll(stack, manager);
  const dir = mkdtempSync(join(tmpdir(), 'outbound-private-mx-'));
  dirs.push(dir);
  await writeNodeState(dir, { edge_url: stack.url, node_id: enrolled.id, name: 'mx-private', token: enrolled.token, enrolled_at: new Date().toISOString() });
  return startTestNode({
    stack, stateDir: dir, dnsAddress: dns.address, log: collectingLog(logs), hostName: 'relay.acme.test',
    env: { SERVICE_OUTBOUND_MX_PORT: String(v4.port), SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false', ...env },
    outbound: { idlePollMs: 200, timeouts: { connectionMs: 1000, greetingMs: 1000, socketMs: 3000 } },
  });
}

async function send(to: string[]): Promise<{ message_id: string; emails: { id: string; recipient: string }[] }> {
  const r = await stack.call('POST', '/api/v1/emails/send', {
    token: sender, body: { from: 'Acme <news@acme.test>', to, subject: `Hello ${crypto.randomUUID().slice(0, 8)}`, text: 'Hello there.' },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body;
}

/** The recipient's email log entry once it has left the queue. */
async function settled(id: string): Promise<any> {
  return eventually(async () => (await stack.call('GET', `/api/v1/emails/${id}`, { token: sender })).body.email,
    (e) => e?.status === 'sent' || e?.status === 'failed', 20_000);
}

describe('outbound.allow_private_mx off (the default)', () => {
  beforeAll(async () => {
    node = await startNode({});
  });
  afterAll(async () => {
    await node?.stop();
    node = null;
  });

  test.each([
    ['mx-internal.test', 'internal.host is 127.0.0.1 (loopback)'],
    ['a10.test', 'a10.test is 10.1.2.3 (private)'],
    ['a127.test', 'a127.test is 127.0.0.1 (loopback)'],
    ['a169.test', 'a169.test is 169.254.169.254 (link-local)'],
    ['aaaa-loopback.test', 'aaaa-loopback.test is ::1 (loopback)'],
    ['aaaa-ula.test', 'aaaa-ula.test is fc00::25 (unique local)'],
  ])('a recipient at %s fails for good naming the rule; the internal server sees no connection', async (domain, where) => {
    const before = v4.connections + v6.connections;
    const sent = await send([`ann@${domain}`]);
    const entry = await settled(sent.emails[0]!.id);
    const reply = `recipient domain ${domain} has no public mail host: ${where}; ${RULE}`;
    expect(entry).toMatchObject({
      status: 'failed', attempts: 1, error_message: reply, smtp_reply: null,
      delivery_attempts: [{ attempt: 1, outcome: 'failed', smtp_code: null, reply, server: null }],
    });
    expect(v4.connections + v6.connections).toBe(before);
    expect(v4.messages.length + v6.messages.length).toBe(0);
  });
});

describe('outbound.allow_private_mx on (a closed network)', () => {
  test('the same internal MX takes the mail', async () => {
    node = await startNode({ SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true' });
    const sent = await send(['ann@mx-internal.test']);
    const entry = await settled(sent.emails[0]!.id);
    expect(entry).toMatchObject({ status: 'sent', delivery_attempts: [{ outcome: 'sent', smtp_code: 250, server: `internal.host:${v4.port}` }] });
    expect(v4.messages.filter((m) => m.rcptTo.includes('ann@mx-internal.test'))).toHaveLength(1);
  });
});
