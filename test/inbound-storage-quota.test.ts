// Issue 13 item 8, the inbound storage quota: once a project's stored raw
// mail reaches `inbound.storage_quota_bytes` (counted by the cron), the edge
// marks its domains full in the list it gives relay nodes, and a real node
// answers RCPT for them `452 4.2.2` over SMTP; mail a node already accepted
// is still stored, and freeing space opens the domain again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { openRaw } from '../relay-node/test-support/smtp-raw.js';
import { forward, inboundMeta, makeInstallationWide, registerDomain } from './support/relay.js';
import { inboundRecords, startTestNode } from './support/relay-node.js';
import type { TestStack } from './support/stack.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';

const QUOTA = 8_000;
const ACME = 'acme-quota.test';
const GLOBEX = 'globex-quota.test';

const env = useTenantStack({
  settings: { SERVICE_INBOUND_STORAGE_QUOTA_BYTES: String(QUOTA) },
  keys: { inbox: ['inbound:read', 'inbound:delete', 'relay:write'] },
});

let node: RelayNode;
let nodeToken: string;
let dns: TestDnsServer;
let stateDir: string;
let globexReader: string;
const logs: LogLine[] = [];

beforeAll(async () => {
  await registerDomain(env.stack, env.tenant.project.id, ACME);
  await registerDomain(env.stack, env.other.project.id, GLOBEX);
  globexReader = (await env.other.key(['inbound:read'])).token;
  dns = await startDnsServer();
  stateDir = mkdtempSync(join(tmpdir(), 'relay-quota-'));
  const enrolled = await enrollNode({ edgeUrl: env.stack.url, key: env.keys.inbox, name: 'mx-quota', stateDir });
  await makeInstallationWide(env.stack, enrolled.node_id);
  nodeToken = enrolled.token;
  node = await startTestNode({ stack: env.stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), hostName: 'mx.quota.test' });
});
afterAll(async () => {
  await node?.stop();
  await dns?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** The every-minute cron, answered once its work (the storage count among it) is done. */
const runCron = async (s: TestStack) => s.runCron('* * * * *');
const domainList = async () => (await env.stack.call('GET', '/relay/v1/domains', { token: nodeToken })).body;
const smtp = (to: string, subject: string, bodyBytes = 100) => sendMessage({
  port: node.port, from: 'ann@sender.example', to,
  message: `From: <ann@sender.example>\r\nTo: <${to}>\r\nSubject: ${subject}\r\n\r\n${'x'.repeat(bodyBytes)}\r\n`,
});
/** The node's answer to RCPT TO:<to>, in a session that sends no message. */
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
const reply = (r: Awaited<ReturnType<typeof smtp>>) => r.response ?? r.error?.response ?? '';
const stored = async () => (await inboundRecords(env.stack, env.keys.inbox)).map((r) => r.subject).sort();

test('under the quota nothing is marked; once stored mail reaches it the domain is full and the node answers 452 4.2.2', async () => {
  expect(reply(await smtp(`a@${ACME}`, 'small'))).toMatch(/^250 /);
  await eventually(stored, (s) => s.includes('small'), 10_000);
  expect(await runCron(env.stack)).toBe(200);
  expect(await domainList()).toMatchObject({ full: [] });

  // Accepted while the edge still counted the project under its quota: stored, taking it over.
  expect(reply(await smtp(`a@${ACME}`, 'large', QUOTA))).toMatch(/^250 /);
  await eventually(stored, (s) => s.includes('large'), 10_000);
  expect(await runCron(env.stack)).toBe(200);
  const list = await domainList();
  expect(list.domains).toEqual(expect.arrayContaining([ACME, GLOBEX]));
  expect(list.full).toEqual([ACME]);
  const usage = (await env.stack.sql.query('SELECT stored_bytes, quota_reached FROM inbound_usage WHERE project_id = $1', [env.tenant.project.id])).rows[0];
  const sizes = (await inboundRecords(env.stack, env.keys.inbox)).reduce((sum, r) => sum + r.size, 0);
  expect(usage).toEqual({ stored_bytes: String(sizes), quota_reached: true });
  expect(sizes).toBeGreaterThanOrEqual(QUOTA);

  // The node learns it from the heartbeat's new version: RCPT is refused for now, and a whole
  // message is refused at RCPT too, so nothing more is stored.
  const refusedRcpt = await eventually(() => rcptReply(`b@${ACME}`), (r) => r.startsWith('452'), 10_000);
  expect(refusedRcpt).toBe(`452 4.2.2 <b@${ACME}>: mailbox full, the inbound storage quota for ${ACME} is reached; try again later`);
  const refused = await smtp(`b@${ACME}`, 'over');
  expect(refused.error).toMatchObject({ responseCode: 452, command: 'RCPT TO', response: refusedRcpt });
  expect(await stored()).toEqual(['large', 'small']);

  // Another project's domain on the same node is not affected.
  expect(reply(await smtp(`c@${GLOBEX}`, 'other-project'))).toMatch(/^250 /);
  await eventually(async () => (await inboundRecords(env.stack, globexReader)).map((r) => r.subject), (s) => s.includes('other-project'), 10_000);
});

test('ingest never drops what a node already answered 250: a forward for a full project is stored', async () => {
  expect((await domainList()).full).toEqual([ACME]);
  const r = await forward(env.stack, nodeToken, { meta: inboundMeta([`late@${ACME}`], { parsed: { ...inboundMeta([]).parsed, subject: 'accepted-before-the-list-changed' } }), raw: 'Subject: accepted-before-the-list-changed\r\n\r\nHi\r\n' });
  expect(r.status).toBe(200);
  expect(r.body.inbound_emails).toEqual([expect.objectContaining({ project_id: env.tenant.project.id, status: 'received' })]);
  expect(await stored()).toContain('accepted-before-the-list-changed');
});

test('deleting stored mail frees the quota at the next count: the node accepts mail for the domain again', async () => {
  for (const record of await inboundRecords(env.stack, env.keys.inbox)) {
    if (record.subject === 'large') expect((await env.stack.call('DELETE', `/api/v1/inbound-emails/${record.id}`, { token: env.keys.inbox })).status).toBe(204);
  }
  expect(await runCron(env.stack)).toBe(200);
  expect((await domainList()).full).toEqual([]);
  await eventually(() => rcptReply(`d@${ACME}`), (r) => r.startsWith('250'), 10_000);
  expect(reply(await smtp(`d@${ACME}`, 'after-cleanup'))).toMatch(/^250 /);
  await eventually(stored, (s) => s.includes('after-cleanup'), 10_000);
});
