// Issue 13, item 8: "a tenant's email log never shows the shared pool's host
// or seal errors". The pool (/api/v1/admin/smtp-pool) is the operator's: an
// installation-wide relay node delivers through it, and the tenant's
// `GET /api/v1/emails/{id}` and webhooks name it `shared pool` with a generic
// reply (the reply code and enhanced status code kept), while the host, its
// replies and a password that cannot be opened stay in the node's and the
// edge's logs. A real relay node, a real pool server on loopback that names
// an internal host in every reply, the real edge.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { seal } from '../edge/src/crypto/seal.js';
import { freePort } from '../edge/local/free-port.js';
import type { RelayNode } from '../relay-node/src/index.js';
import { startReceiver, type Receiver } from '../relay-node/test-support/receiver.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { enroll, makeInstallationWide } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const INTERNAL = 'pool-relay7.corp.internal';
const DETAILS = '(details in the relay node\'s log)';

let stack: TestStack;
let dns: TestDnsServer;
let pool: Receiver;
let hooks: WebhookReceiver;
let admin: string;
let sender: string;
let node: RelayNode;
let dir: string;
const nodeLogs: LogLine[] = [];

beforeAll(async () => {
  stack = await startTestStack({
    captureLogs: true,
    settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SERVICE_OUTBOUND_RETRY_DELAY: '60s', SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000' },
  });
  admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'pool-tenant');
  sender = (await tenant.key(['emails:write', 'emails:read', 'suppressions:read'])).token;
  const manager = (await tenant.key(['domains:write', 'relay:write', 'webhooks:write'])).token;
  const domain = await stack.call('POST', '/api/v1/domains', { token: manager, body: { name: 'acme.test' } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domain.body.domain.id]);

  hooks = await startWebhookReceiver();
  const webhook = await stack.call('POST', '/api/v1/webhooks', { token: manager, body: { url: `${hooks.url}/edgemail`, events: ['email.sent', 'email.failed'] } });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);

  // The operator's pool server names its internal host in every reply, as real ones do.
  pool = await startReceiver({
    starttls: false,
    rcptReply: (to) => (to.startsWith('gone@') ? { code: 550, text: `5.1.1 <${to}>: unknown user at ${INTERNAL}` } : null),
    okText: (n) => `2.0.0 Ok: queued on ${INTERNAL} as P${n}`,
  });
  dns = await startDnsServer({});

  const enrolled = await enroll(stack, manager, 'mx-operator');
  await makeInstallationWide(stack, enrolled.id);
  dir = mkdtempSync(join(tmpdir(), 'outbound-shared-pool-'));
  await writeNodeState(dir, { edge_url: stack.url, node_id: enrolled.id, name: 'mx-operator', token: enrolled.token, enrolled_at: new Date().toISOString() });
  node = await startTestNode({
    stack, stateDir: dir, dnsAddress: dns.address, log: collectingLog(nodeLogs), hostName: 'relay.operator.test',
    env: { SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false' },
    outbound: { idlePollMs: 200, timeouts: { connectionMs: 1000, greetingMs: 1000, socketMs: 3000 } },
  });
});

afterAll(async () => {
  await node?.stop();
  await pool?.close();
  await hooks?.close();
  await dns?.close();
  await stack?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Adds one pool server (the only one while the test runs) and removes it afterwards. */
async function withPoolServer(body: Record<string, unknown>, run: (id: string) => Promise<void>): Promise<void> {
  const created = await stack.call('POST', '/api/v1/admin/smtp-pool', { token: admin, body: { name: 'pool-7', security: 'none', ...body } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const id = created.body.smtp_server.id;
  try {
    await run(id);
  } finally {
    await stack.call('DELETE', `/api/v1/admin/smtp-pool/${id}`, { token: admin });
  }
}

async function send(to: string): Promise<string> {
  const r = await stack.call('POST', '/api/v1/emails/send', {
    token: sender, body: { from: 'Acme <news@acme.test>', to: [to], subject: `Hello ${crypto.randomUUID().slice(0, 8)}`, text: 'Hello there.' },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.emails[0].id;
}

const record = async (id: string) => (await stack.call('GET', `/api/v1/emails/${id}`, { token: sender })).body.email;
/**
 * The record once it has an attempt (or has failed at the claim), settled: its status and its attempts are two
 * statements (READ COMMITTED, a snapshot each), so a result committing between them shows an attempt beside
 * the status it replaced ('sending').
 */
const attempted = (id: string) => eventually(() => record(id), (e) => (e.delivery_attempts.length > 0 && e.status !== 'sending') || e.status === 'failed', 20_000);
const hooksFor = (id: string) => hooks.received().filter((r) => r.body?.data?.id === id);

/** Nothing of the operator's server in what the tenant can read. */
function expectNothingOfThePool(text: string, port: number) {
  expect(text).not.toContain(INTERNAL);
  expect(text).not.toContain('127.0.0.1');
  expect(text).not.toContain(`:${port}`);
  expect(text).not.toContain('pool-7');
}

describe('a tenant\'s email log and webhooks through the shared pool', () => {
  test('sent and hard-bounced: server "shared pool", the codes kept, the pool\'s words only in the node\'s log', async () => {
    await withPoolServer({ host: '127.0.0.1', port: pool.port }, async () => {
      const ok = await send('ann@example.org');
      const gone = await send('gone@example.org');
      const sent = await eventually(() => record(ok), (e) => e.status === 'sent', 20_000);
      const failed = await eventually(() => record(gone), (e) => e.status === 'failed', 20_000);

      expect(sent).toMatchObject({
        smtp_reply: `250 2.0.0 accepted by the shared pool ${DETAILS}`,
        delivery_attempts: [{ outcome: 'sent', smtp_code: 250, server: 'shared pool', reply: `250 2.0.0 accepted by the shared pool ${DETAILS}` }],
      });
      const refusal = `550 5.1.1 the shared pool refused the message ${DETAILS}`;
      expect(failed).toMatchObject({
        error_message: refusal, smtp_reply: refusal,
        delivery_attempts: [{ outcome: 'failed', smtp_code: 550, server: 'shared pool', reply: refusal }],
      });
      // 550 5.1.1 is still a hard bounce: the address is suppressed.
      const suppressions = await stack.call('GET', '/api/v1/suppressions', { token: sender });
      expect(JSON.stringify(suppressions.body)).toContain('gone@example.org');
      // The pool did take and refuse them: the refusal is the pool's, its words reworded.
      expect(pool.messages.filter((m) => m.rcptTo.includes('ann@example.org'))).toHaveLength(1);

      await eventually(async () => hooksFor(ok).length + hooksFor(gone).length, (n) => n === 2, 15_000);
      for (const text of [JSON.stringify(sent), JSON.stringify(failed), ...[...hooksFor(ok), ...hooksFor(gone)].map((h) => h.raw.toString())]) {
        expectNothingOfThePool(text, pool.port);
      }
      // The operator's account has it all.
      const said = nodeLogs.filter((l) => l.message === 'outbound delivery through the shared pool' && l.fields?.email_id === gone);
      expect(said[0]?.fields).toMatchObject({ server: `127.0.0.1:${pool.port}`, reply: `550 5.1.1 <gone@example.org>: unknown user at ${INTERNAL}` });
    });
  });

  test('a pool server that cannot be reached: deferred, "shared pool", no address or socket error', async () => {
    const port = await freePort();
    await withPoolServer({ host: '127.0.0.1', port }, async () => {
      const id = await send('bob@example.org');
      const entry = await attempted(id);
      expect(entry).toMatchObject({
        status: 'queued',
        delivery_attempts: [{ outcome: 'deferred', smtp_code: null, server: 'shared pool', reply: `the shared pool could not be reached or did not answer ${DETAILS}` }],
      });
      expectNothingOfThePool(JSON.stringify(entry), port);
      expect(JSON.stringify(entry)).not.toContain('ECONNREFUSED');
      const said = nodeLogs.find((l) => l.message === 'outbound delivery through the shared pool' && l.fields?.email_id === id);
      expect(String(said?.fields?.reply)).toContain('ECONNREFUSED');
      // Not retried while the test cleans up.
      await stack.sql.query(`UPDATE emails SET next_attempt_at = now() + interval '100 years' WHERE id = $1`, [id]);
    });
  });

  test('a pool password that cannot be opened: failed with a generic message; the server and the seal error in the edge\'s log', async () => {
    await withPoolServer({ host: '127.0.0.1', port: pool.port, username: 'pool-user', password: 'pool-secret' }, async (poolId) => {
      // Sealed under another key: it does not open with the installation's.
      await stack.sql.query('UPDATE smtp_servers SET password_sealed = $1 WHERE id = $2', [await seal('x', Buffer.alloc(32, 7).toString('base64'), 'smtp_servers.password'), poolId]);
      const id = await send('cat@example.org');
      const entry = await attempted(id);
      const generic = 'the shared SMTP pool cannot be used: one of its servers is misconfigured (the operator has the details)';
      expect(entry).toMatchObject({ status: 'failed', error_message: generic, delivery_attempts: [] });
      await eventually(async () => hooksFor(id).length, (n) => n === 1, 15_000);
      for (const text of [JSON.stringify(entry), hooksFor(id)[0]!.raw.toString()]) {
        expectNothingOfThePool(text, pool.port);
        expect(text).not.toMatch(/seal|decrypt|cipher/i);
      }
      const logged = stack.logs().map((l) => JSON.stringify(l)).find((l) => l.includes(id) && l.includes('failed at the claim'));
      expect(logged).toContain(`the password of shared pool SMTP server pool-7 (127.0.0.1:${pool.port}) cannot be opened`);
    });
  });
});
