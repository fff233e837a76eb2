// Inbound routing rules over SMTP, against a real relay node and edge
// (docs/inbound-rules.md): a refusal the recipient decides is 550 at RCPT, one
// that needs the message is 550 at the end of DATA (the record kept,
// rejected); drop is 250 with nothing stored and the rule's count raised;
// webhooks delivers inbound.received to the chosen webhook only; mail no rule
// matches is stored as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { openRaw } from '../relay-node/test-support/smtp-raw.js';
import { makeInstallationWide, registerDomain } from './support/relay.js';
import { inboundRecords, startTestNode } from './support/relay-node.js';
import { useTenantStack } from './support/tenant-stack.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';
import { eventually } from './support/wait.js';

const DOMAIN = 'rules-smtp.test';
const OTHER = 'rules-other.test';
const env = useTenantStack({
  settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' },
  keys: { owner: ['inbound:read', 'inbound:write', 'webhooks:write', 'webhooks:read', 'relay:write'] },
});

let node: RelayNode;
let dns: TestDnsServer;
let stateDir: string;
let chosen: WebhookReceiver;
let other: WebhookReceiver;
let chosenId: string;
let otherId: string;
const logs: LogLine[] = [];

const call = (method: string, path: string, body?: unknown) => env.stack.call(method, path, { token: env.keys.owner, body });
const addRule = async (body: unknown) => {
  const r = await call('POST', '/api/v1/inbound-rules', body);
  expect(r.status).toBe(201);
  return r.body.inbound_rule;
};
const smtp = (to: string | string[], subject: string, from = 'ann@sender.example') => sendMessage({
  port: node.port, from, to,
  message: `From: <${from}>\r\nTo: <${[to].flat().join('>, <')}>\r\nSubject: ${subject}\r\nMessage-ID: <${crypto.randomUUID()}@sender.example>\r\n\r\nHello\r\n`,
});
const reply = (r: Awaited<ReturnType<typeof smtp>>) => r.response ?? r.error?.response ?? '';
async function rcptReply(to: string): Promise<string> {
  const raw = await openRaw(node.port);
  try {
    await raw.reply();
    await raw.command('EHLO probe.sender.example');
    await raw.command('MAIL FROM:<ann@sender.example>');
    return await raw.command(`RCPT TO:<${to}>`);
  } finally {
    raw.close();
  }
}
const records = async () => inboundRecords(env.stack, env.keys.owner);
const bySubject = async (subject: string) => (await records()).filter((r) => r.subject === subject);

beforeAll(async () => {
  await registerDomain(env.stack, env.tenant.project.id, DOMAIN);
  await registerDomain(env.stack, env.other.project.id, OTHER);
  dns = await startDnsServer();
  stateDir = mkdtempSync(join(tmpdir(), 'relay-rules-'));
  const enrolled = await enrollNode({ edgeUrl: env.stack.url, key: env.keys.owner, name: 'mx-rules', stateDir });
  await makeInstallationWide(env.stack, enrolled.node_id);
  node = await startTestNode({ stack: env.stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), hostName: 'mx.rules.test' });
  [chosen, other] = [await startWebhookReceiver(), await startWebhookReceiver()];
  const hook = async (url: string) => (await call('POST', '/api/v1/webhooks', { url, events: ['inbound.received'] })).body.webhook.id as string;
  [chosenId, otherId] = [await hook(chosen.url), await hook(other.url)];

  // In order: a refusal the recipient decides, a refusal that needs the subject, a drop, a webhooks rule.
  await addRule({ name: 'gone', match: { recipient: 'old-*@rules-smtp.test' }, action: 'refuse', refuse_text: 'This address no longer takes mail' });
  await addRule({ name: 'no-lottery', match: { subject: { regex: 'lottery|jackpot' } }, action: 'refuse', refuse_text: 'No lotteries please' });
  await addRule({ name: 'noise', match: { recipient: 'noreply@rules-smtp.test' }, action: 'drop' });
  await addRule({ name: 'to-desk', match: { recipient: 'support+*@rules-smtp.test' }, action: 'webhooks', webhook_ids: [chosenId] });
});
afterAll(async () => {
  await node?.stop();
  await dns?.close();
  await chosen?.close();
  await other?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

test('refuse by recipient: 550 at RCPT with the rule\'s text, nothing stored', async () => {
  const answer = await eventually(() => rcptReply(`old-bob@${DOMAIN}`), (r) => r.startsWith('550'), 10_000);
  expect(answer).toBe(`550 5.7.1 <old-bob@${DOMAIN}>: This address no longer takes mail`);
  const sent = await smtp(`old-bob@${DOMAIN}`, 'to-an-old-address');
  expect(sent.error).toMatchObject({ responseCode: 550, command: 'RCPT TO' });
  // Another recipient of the domain is taken.
  expect(await rcptReply(`bob@${DOMAIN}`)).toMatch(/^250 /);
  expect(await bySubject('to-an-old-address')).toEqual([]);
});

test('refuse by subject: RCPT is taken (undecidable there), 550 at the end of DATA, the record kept as rejected', async () => {
  await eventually(() => rcptReply(`old-x@${DOMAIN}`), (r) => r.startsWith('550'), 10_000);
  const sent = await smtp(`carol@${DOMAIN}`, 'You won the lottery');
  expect(sent.error).toMatchObject({ responseCode: 550 });
  expect(reply(sent)).toBe('550 5.7.1 No lotteries please');
  const [record] = await eventually(() => bySubject('You won the lottery'), (r) => r.length === 1, 10_000);
  expect(record).toMatchObject({ status: 'rejected', status_reason: expect.stringContaining('No lotteries please') });
});

test('drop: 250, nothing stored, counted on the rule', async () => {
  const sent = await smtp(`noreply@${DOMAIN}`, 'dropped-one');
  expect(reply(sent)).toMatch(/^250 /);
  const rule = await eventually(async () => (await call('GET', '/api/v1/inbound-rules')).body.inbound_rules.find((r: any) => r.name === 'noise'), (r) => r.matched_count === 1, 10_000);
  expect(rule.last_matched_at).not.toBeNull();
  expect(await bySubject('dropped-one')).toEqual([]);
});

test('webhooks: stored, inbound.received to the chosen webhook only; unmatched mail to every webhook', async () => {
  expect(reply(await smtp(`support+42@${DOMAIN}`, 'for-the-desk'))).toMatch(/^250 /);
  expect(reply(await smtp(`dave@${DOMAIN}`, 'plain-mail'))).toMatch(/^250 /);
  const [desk] = await eventually(() => bySubject('for-the-desk'), (r) => r.length === 1, 10_000);
  const [plain] = await eventually(() => bySubject('plain-mail'), (r) => r.length === 1, 10_000);
  expect(desk.status).toBe('received');
  const ids = (receiver: WebhookReceiver) => receiver.received().map((r) => (r.body as any)?.data?.id);
  await eventually(async () => ids(chosen), (got) => got.includes(desk.id) && got.includes(plain.id), 10_000);
  await eventually(async () => ids(other), (got) => got.includes(plain.id), 10_000);
  expect(ids(other)).not.toContain(desk.id);
  const deliveries = (await call('GET', `/api/v1/webhooks/${otherId}/deliveries`)).body;
  expect(JSON.stringify(deliveries)).not.toContain(desk.id);
});

test('a message for two projects, one refusing it by subject: 250, rejected for that project only, received for the other', async () => {
  const otherReader = (await env.other.key(['inbound:read'])).token;
  const sent = await smtp([`carol@${DOMAIN}`, `erin@${OTHER}`], 'lottery for two');
  expect(reply(sent)).toMatch(/^250 /);
  const [mine] = await eventually(() => bySubject('lottery for two'), (r) => r.length === 1, 10_000);
  expect(mine).toMatchObject({ status: 'rejected', recipients: [`carol@${DOMAIN}`] });
  const [theirs] = await eventually(async () => (await inboundRecords(env.stack, otherReader)).filter((r) => r.subject === 'lottery for two'), (r) => r.length === 1, 10_000);
  expect(theirs).toMatchObject({ status: 'received', recipients: [`erin@${OTHER}`] });
});

test('a rule change is seen by the very next message: edit, move and delete, though the edge keeps compiled rules per isolate', async () => {
  const count = async (id: string) => (await call('GET', '/api/v1/inbound-rules')).body.inbound_rules.find((r: any) => r.id === id)?.matched_count;
  const dropped = async (id: string, n: number, subject: string) => {
    await eventually(() => count(id), (c) => c === n, 10_000);
    expect(await bySubject(subject)).toEqual([]);
  };
  const stored = async (subject: string) => eventually(() => bySubject(subject), (r) => r.length === 1, 10_000);
  const rule = await addRule({ name: 'cache-drop', match: { subject: '*cache-alpha*' }, action: 'drop' });
  expect(reply(await smtp(`dave@${DOMAIN}`, 'cache-alpha 1'))).toMatch(/^250 /);
  await dropped(rule.id, 1, 'cache-alpha 1');

  // Edited: the next message is judged by the new condition, not the compiled old one.
  expect((await call('PATCH', `/api/v1/inbound-rules/${rule.id}`, { match: { subject: '*cache-beta*' } })).status).toBe(200);
  expect(reply(await smtp(`dave@${DOMAIN}`, 'cache-alpha 2'))).toMatch(/^250 /);
  await stored('cache-alpha 2');
  expect(reply(await smtp(`dave@${DOMAIN}`, 'cache-beta 1'))).toMatch(/^250 /);
  await dropped(rule.id, 2, 'cache-beta 1');

  // Moved: a store rule for the same subject put first decides before the drop.
  const keep = await addRule({ name: 'cache-keep', match: { subject: '*cache-beta*' }, action: 'store' });
  expect((await call('PATCH', `/api/v1/inbound-rules/${keep.id}`, { position: 1 })).status).toBe(200);
  expect(reply(await smtp(`dave@${DOMAIN}`, 'cache-beta 2'))).toMatch(/^250 /);
  const [kept] = await stored('cache-beta 2');
  expect(kept.status).toBe('received');
  expect(await count(keep.id)).toBe(1);

  // Deleted: the drop rule, moved back first, decides; deleted, it no longer does.
  expect((await call('PATCH', `/api/v1/inbound-rules/${rule.id}`, { position: 1 })).status).toBe(200);
  expect(reply(await smtp(`dave@${DOMAIN}`, 'cache-beta 3'))).toMatch(/^250 /);
  await dropped(rule.id, 3, 'cache-beta 3');
  expect((await call('DELETE', `/api/v1/inbound-rules/${rule.id}`)).status).toBe(204);
  expect((await call('DELETE', `/api/v1/inbound-rules/${keep.id}`)).status).toBe(204);
  expect(reply(await smtp(`dave@${DOMAIN}`, 'cache-beta 4'))).toMatch(/^250 /);
  await stored('cache-beta 4');
});
