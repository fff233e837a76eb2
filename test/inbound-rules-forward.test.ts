// The forward action of inbound routing rules (docs/inbound-rules.md,
// "Forward"), over SMTP against a real relay node and edge. The node is the
// MX of both test domains, and its outbound worker delivers by MX to its own
// inbound listener (outbound.mx_port), so a forward from one project reaches
// the other as real inbound mail: its envelope sender is the SRS address, its
// From the address it was received at, its DKIM signature (checked with
// mailauth) that project domain's. Two projects forwarding to each other stop
// after the documented number of hops; bad `forward_to` is 400 with nothing changed.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Resolver } from 'node:dns/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import type * as MailauthModule from '../relay-node/node_modules/mailauth/index.js';
import { freePort } from './support/global-setup.js';
import { enroll, makeInstallationWide } from './support/relay.js';
import { inboundRecords, rawMessage, startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const fromRelayNode = createRequire(new URL('../relay-node/package.json', import.meta.url));
const { authenticate } = fromRelayNode('mailauth') as typeof MailauthModule;

const A = 'fwd-a.test';
const B = 'fwd-b.test';
// The stack's bounce domain (bounces.<host of server.public_url>): where SRS addresses live.
const BOUNCES = 'bounces.mail.example.com';
const PERMISSIONS = ['inbound:read', 'inbound:write', 'domains:write', 'domains:read', 'emails:read', 'emails:write', 'suppressions:write'];

let stack: TestStack;
let dns: TestDnsServer;
let node: RelayNode;
let stateDir: string;
let keyA: string;
let keyB: string;
const logs: LogLine[] = [];

async function verifiedDomain(token: string, name: string) {
  const domain = await stack.call('POST', '/api/v1/domains', { token, body: { name } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  for (const record of domain.body.domain.dns_records as { name: string; value: string; purpose: string }[]) {
    if (record.purpose === 'dkim' || record.purpose === 'spf') dns.set(record.name, { TXT: [record.value.replace(/include:\S+/, 'ip4:127.0.0.1')] });
  }
  dns.set(name, { MX: [{ preference: 10, exchange: 'mx.fwd.test' }], TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
  dns.set(`_dmarc.${name}`, { TXT: ['v=DMARC1; p=reject'] });
  await stack.sql.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now() WHERE id = $1', [domain.body.domain.id]);
}

const call = (token: string, method: string, path: string, body?: unknown) => stack.call(method, path, { token, body });
async function addRule(token: string, body: unknown) {
  const r = await call(token, 'POST', '/api/v1/inbound-rules', body);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.inbound_rule;
}
const rulesOf = async (token: string) => (await call(token, 'GET', '/api/v1/inbound-rules')).body.inbound_rules as any[];
const recordsWith = async (token: string, subject: string) => (await inboundRecords(stack, token)).filter((r) => r.subject === subject);
const forwardsWith = async (token: string, subject: string) =>
  ((await call(token, 'GET', '/api/v1/emails?limit=100')).body.emails as any[]).filter((e) => e.subject === subject);

const smtp = (to: string, subject: string, extra = '') => sendMessage({
  port: node.port, from: 'ann@sender.example', to,
  message: `From: Ann Example <ann@sender.example>\r\nTo: <${to}>\r\nSubject: ${subject}\r\nMessage-ID: <${crypto.randomUUID()}@sender.example>\r\n${extra}` +
    'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b1"\r\n\r\n--b1\r\nContent-Type: text/plain\r\n\r\nHello from Ann\r\n' +
    '--b1\r\nContent-Type: text/plain; name="note.txt"\r\nContent-Disposition: attachment; filename="note.txt"\r\n\r\nattached words\r\n--b1--\r\n',
});

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000' } });
  const admin = await platformToken(stack);
  const a = await seedProject(stack, admin, 'fwd-a');
  const b = await seedProject(stack, admin, 'fwd-b');
  keyA = (await a.key(PERMISSIONS, { name: 'forward-test' })).token;
  keyB = (await b.key(PERMISSIONS, { name: 'forward-test' })).token;
  // The bounce domain's SPF, as docs/bounces.md tells the operator to publish it: SRS envelope senders are there.
  dns = await startDnsServer({ 'mx.fwd.test': { A: ['127.0.0.1'] }, [BOUNCES]: { TXT: ['v=spf1 ip4:127.0.0.1 -all'] } });
  await verifiedDomain(keyA, A);
  await verifiedDomain(keyB, B);

  // One installation-wide node: the MX of both domains, delivering by MX to its own listener.
  const port = await freePort();
  const relayKey = (await a.key(['relay:write'])).token;
  const enrolled = await enroll(stack, relayKey, 'mx-fwd');
  await makeInstallationWide(stack, enrolled.id);
  stateDir = mkdtempSync(join(tmpdir(), 'rules-forward-'));
  await writeNodeState(stateDir, { edge_url: stack.url, node_id: enrolled.id, name: 'mx-fwd', token: enrolled.token, enrolled_at: new Date().toISOString() });
  node = await startTestNode({
    stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), port, hostName: 'mx.fwd.test',
    env: { SERVICE_OUTBOUND_MX_PORT: String(port), SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true', SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false', SERVICE_OUTBOUND_HELO_NAME: 'mx.fwd.test' },
    outbound: { idlePollMs: 200 },
  });
}, 60_000);

afterAll(async () => {
  await node?.stop();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

test('bad forward_to is 400 naming the field, and nothing changes', async () => {
  const before = await rulesOf(keyA);
  const cases: [unknown, RegExp][] = [
    [{ action: 'forward', forward_to: 'Bob <bob@partner.example>' }, /forward_to/],
    [{ action: 'forward', forward_to: 'a@partner.example, b@partner.example' }, /forward_to/],
    [{ action: 'forward', forward_to: `loop@${A}` }, /forward_to: is at fwd-a\.test, a domain of this project/],
    [{ action: 'forward' }, /forward_to: required with action forward/],
    [{ action: 'store', forward_to: 'bob@partner.example' }, /forward_to: only with action forward/],
  ];
  for (const [body, error] of cases) {
    const r = await call(keyA, 'POST', '/api/v1/inbound-rules', body);
    expect(r.status, JSON.stringify(body)).toBe(400);
    expect(r.body.error).toMatch(error);
    expect(Object.keys(r.body.fields ?? {})).toContain('forward_to');
  }
  const rule = await addRule(keyA, { name: 'patch-me', match: { recipient: `nobody@${A}` }, action: 'store' });
  const patched = await call(keyA, 'PATCH', `/api/v1/inbound-rules/${rule.id}`, { action: 'forward', forward_to: 'not an address' });
  expect(patched.status).toBe(400);
  expect((await call(keyA, 'GET', `/api/v1/inbound-rules/${rule.id}`)).body.inbound_rule).toMatchObject({ action: 'store', forward_to: null });
  expect(await rulesOf(keyA)).toHaveLength(before.length + 1);
  expect((await call(keyA, 'DELETE', `/api/v1/inbound-rules/${rule.id}`)).status).toBe(204);
});

test('forward: stored, and a copy delivered through the sending path: From the receiving address, Reply-To the sender, SRS envelope, DKIM of our domain', async () => {
  const rule = await addRule(keyA, { name: 'to-partner', match: { recipient: `desk@${A}` }, action: 'forward', forward_to: `inbox@${B}` });
  expect(rule).toMatchObject({ action: 'forward', forward_to: `inbox@${B}` });
  const dry = await call(keyA, 'POST', '/api/v1/inbound-rules/test', { message: { recipients: [`desk@${A}`] } });
  expect(dry.body).toMatchObject({ action: 'forward', rule: { id: rule.id }, would: expect.stringContaining(`send a copy to inbox@${B}`) });
  const subject = `forward-me ${crypto.randomUUID().slice(0, 8)}`;
  expect((await smtp(`desk@${A}`, subject)).response).toMatch(/^250 /);

  // The original, kept in project A, says what became of it.
  const [original] = await eventually(() => recordsWith(keyA, subject), (r) => r.length === 1 && /email/.test(r[0].status_reason ?? ''), 20_000);
  expect(original.status).toBe('received');
  const emailId = /^forwarded by inbound rule \S+ to inbox@fwd-b\.test: email (\S+) \(queued\)$/.exec(original.status_reason)?.[1];
  expect(emailId, original.status_reason).toBeDefined();

  // The copy arrives in project B as inbound mail, by MX from the node's outbound worker.
  const [copy] = await eventually(() => recordsWith(keyB, subject), (r) => r.length === 1, 30_000);
  expect(copy.sender).toMatch(/^SRS0=[0-9a-f]{8}=[a-z2-7]{2}=sender\.example=ann@bounces\.mail\.example\.com$/);
  expect(copy.headers.from).toBe(`"Ann Example via desk@${A}" <desk@${A}>`);
  expect(copy.headers['reply-to']).toBe('ann@sender.example');
  expect(copy.headers['x-edgemail-forwarded']).toBe('1');
  expect(copy.headers['x-original-from']).toBe('Ann Example <ann@sender.example>');
  expect(copy.headers['x-edgemail-inbound-id']).toBe(original.id);
  expect(copy.headers['return-path']).toBeUndefined();
  expect(copy.text_body.trim()).toBe('Hello from Ann');
  expect(copy.attachments).toMatchObject([{ filename: 'note.txt', size: 'attached words'.length }]);

  // mailauth on the bytes that arrived: signed d=fwd-a.test, SPF of the SRS domain passes, DMARC aligned (by DKIM).
  const raw = await rawMessage(stack, keyB, copy.id);
  expect(raw.status).toBe(200);
  const resolver = new Resolver();
  resolver.setServers([dns.address]);
  const verdict = await authenticate(raw.bytes, {
    ip: '127.0.0.1', helo: 'mx.fwd.test', sender: copy.sender, mta: 'mx.fwd.test',
    resolver: (name: string, rr: string) => resolver.resolve(name, rr) as never,
  });
  expect(verdict.dkim.results.find((r: any) => r.status.result === 'pass')?.signingDomain).toBe(A);
  expect(verdict.spf).toMatchObject({ domain: BOUNCES, status: { result: 'pass' } });
  expect(verdict.dmarc).toMatchObject({ status: { result: 'pass' } });

  // The email log of project A has the forward, sent.
  const email = await eventually(async () => (await call(keyA, 'GET', `/api/v1/emails/${emailId}`)).body.email, (e) => e.status === 'sent', 15_000);
  expect(email).toMatchObject({ origin: 'forward', recipient: `inbox@${B}`, subject });
  expect((await rulesOf(keyA)).find((r) => r.id === rule.id).matched_count).toBe(1);
}, 60_000);

test('a forward to a suppressed address follows the sending path: the email is suppressed, the record says so', async () => {
  expect((await call(keyA, 'POST', '/api/v1/suppressions', { address: `gone@${B}` })).status).toBe(201);
  await addRule(keyA, { name: 'to-gone', match: { recipient: `old@${A}` }, action: 'forward', forward_to: `gone@${B}` });
  const subject = `to-suppressed ${crypto.randomUUID().slice(0, 8)}`;
  expect((await smtp(`old@${A}`, subject)).response).toMatch(/^250 /);
  const [record] = await eventually(() => recordsWith(keyA, subject), (r) => r.length === 1 && !!r[0].status_reason, 20_000);
  expect(record.status_reason).toMatch(/^forwarded by inbound rule \S+ to gone@fwd-b\.test: email \S+ \(suppressed\)$/);
  const [email] = await forwardsWith(keyA, subject);
  expect(email).toMatchObject({ status: 'suppressed', origin: 'forward' });
}, 30_000);

test('a forward loop between two projects stops after 3 hops, the last record saying why', async () => {
  const ruleA = await addRule(keyA, { name: 'loop-a', match: { recipient: `loop@${A}` }, action: 'forward', forward_to: `loop@${B}` });
  const ruleB = await addRule(keyB, { name: 'loop-b', match: { recipient: `loop@${B}` }, action: 'forward', forward_to: `loop@${A}` });
  const subject = `loop ${crypto.randomUUID().slice(0, 8)}`;
  expect((await smtp(`loop@${A}`, subject)).response).toMatch(/^250 /);

  // A (hop 0) -> B (1) -> A (2) -> B (3): stored, not forwarded.
  const inB = await eventually(() => recordsWith(keyB, subject), (r) => r.length === 2 && r.every((x: any) => x.status_reason), 40_000);
  const inA = await eventually(() => recordsWith(keyA, subject), (r) => r.length === 2 && r.every((x: any) => x.status_reason), 10_000);
  const last = inB.find((r: any) => r.headers['x-edgemail-forwarded'] === '3');
  expect(last.status).toBe('received');
  expect(last.status_reason).toBe(`not forwarded by inbound rule ${ruleB.id}: loop limit: forwarded 3 times already (X-Edgemail-Forwarded), at most 3`);
  expect(inA.map((r: any) => r.headers['x-edgemail-forwarded'] ?? '0').sort()).toEqual(['0', '2']);
  // The second hop's envelope sender is SRS1 (it does not grow with each hop).
  expect(inA.find((r: any) => r.headers['x-edgemail-forwarded'] === '2').sender)
    .toMatch(/^SRS1=[0-9a-f]{8}=bounces\.mail\.example\.com==[0-9a-f]{8}=[a-z2-7]{2}=sender\.example=ann@bounces\.mail\.example\.com$/);

  // Three copies in all: two from A, one from B; every decision counted on its rule.
  expect(await forwardsWith(keyA, subject)).toHaveLength(2);
  expect(await forwardsWith(keyB, subject)).toHaveLength(1);
  expect((await rulesOf(keyA)).find((r) => r.id === ruleA.id).matched_count).toBe(2);
  expect((await rulesOf(keyB)).find((r) => r.id === ruleB.id).matched_count).toBe(2);
  // Nothing more comes.
  await new Promise((r) => setTimeout(r, 1500));
  expect(await recordsWith(keyB, subject)).toHaveLength(2);
  expect(await recordsWith(keyA, subject)).toHaveLength(2);
}, 60_000);
