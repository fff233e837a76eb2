// Dead letters are never silent (issue 13, items 4 and 6): a message the real
// edge refuses for good goes to the node's `dead/` with its reason, is counted
// in the heartbeat and shown where the project's relay nodes are listed, is
// listed by `edgemail relay dead-letters`, and while `dead/` is over
// `relay_node.spool.max_dead_letter_bytes` the real listener answers new mail
// `452 4.3.1` rather than accept what it may not deliver.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, spoolDir, type RelayNode } from '../relay-node/src/index.js';
import type { SpooledMeta } from '../relay-node/src/inbound/spool-store/spooled-message.js';
import { openSpool } from '../relay-node/src/spool/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { openRaw } from '../relay-node/test-support/smtp-raw.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { registerDomain } from './support/relay.js';
import { inboundRecords, startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const ROOT = new URL('../', import.meta.url).pathname;
const DOMAIN = 'acme-dead-letters.test';
const TO = `support@${DOMAIN}`;
/** `relay_node.spool.max_dead_letter_bytes`: one dead message is more. */
const MAX_DEAD_BYTES = 200;

let stack: TestStack;
let key: string;
let dns: TestDnsServer;
let node: RelayNode;
let nodeId: string;
let stateDir: string;
let refusedId: string;
const logs: LogLine[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  const tenant = await seedProject(stack, await platformToken(stack), 'dead-letters');
  ({ token: key } = await tenant.key(['relay:write', 'relay:read', 'inbound:read']));
  await registerDomain(stack, tenant.project.id, DOMAIN);
  dns = await startDnsServer();
  stateDir = mkdtempSync(join(tmpdir(), 'relay-dead-'));
  nodeId = (await enrollNode({ edgeUrl: stack.url, key, name: 'mx-dead', stateDir })).node_id;
  // A message whose envelope the edge refuses for good (a recipient that is no
  // address: 400), spooled before the node starts, as one written by an older
  // node would be. The node forwards it, is refused, and must not lose it quietly.
  const spool = await openSpool<SpooledMeta>(spoolDir(stateDir));
  ({ id: refusedId } = await spool.write(Buffer.from(`From: <ann@sender.example>\r\nTo: <${TO}>\r\nSubject: refused\r\n\r\nNever stored.\r\n`), {
    format: 1, listener: 'inbound', received_at: new Date().toISOString(), session_id: 's1',
    client_ip: '192.0.2.9', client_port: 40000, helo: 'client.test', mail_from: 'ann@sender.example', rcpt_to: ['no-address-here'],
    tls: null, auth: { spf: 'none', dkim: 'none', dmarc: 'none', aligned: false, client_ip: '192.0.2.9' },
    dmarc_policy: null, smtp_rejected: false, trace_headers: '',
  }));
  await spool.close();
  node = await startTestNode({
    stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), outbound: false,
    env: { SERVICE_RELAY_NODE_SPOOL_MAX_DEAD_LETTER_BYTES: String(MAX_DEAD_BYTES) },
  });
});
afterAll(async () => {
  await node?.stop();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const deadDir = () => join(spoolDir(stateDir), 'dead');
const deadFiles = () => (existsSync(deadDir()) ? readdirSync(deadDir()).sort() : []);
const listedNode = async () => {
  const reply = await stack.call('GET', '/api/v1/relay/nodes', { token: key });
  expect(reply.status).toBe(200);
  return reply.body.relay_nodes.find((n: { id: string }) => n.id === nodeId);
};

function edgemail(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('pnpm', ['-s', 'edgemail', ...args], { cwd: ROOT, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('a message the edge refuses for good', () => {
  test('goes to dead/ with its reason, and the heartbeat counts it where the relay nodes are listed', async () => {
    await eventually(async () => deadFiles(), (files) => files.length === 3, 15_000);
    expect(deadFiles()).toEqual([`${refusedId}.eml`, `${refusedId}.json`, `${refusedId}.reason.txt`]);
    const bytes = deadFiles().reduce((sum, name) => sum + statSync(join(deadDir(), name)).size, 0);
    const listed = await eventually(listedNode, (n) => n.dead_letters === 1, 10_000);
    expect(listed).toMatchObject({ dead_letters: 1, dead_letter_bytes: bytes });
    expect(logs.some((l) => l.level === 'error' && l.message.includes('moved to dead/'))).toBe(true);
  });

  test('`edgemail relay dead-letters` lists it: id, size, when, and the edge\'s reason', async () => {
    const run = await edgemail(['relay', 'dead-letters', '--state-dir', stateDir]);
    expect(run.code, run.stderr).toBe(0);
    const [header, ...rows] = run.stdout.trimEnd().split('\n');
    expect(header).toBe('id\tsize\tmoved_at\treason');
    expect(rows).toHaveLength(1);
    const [id, size, movedAt, reason] = rows[0]!.split('\t');
    expect(id).toBe(refusedId);
    expect(Number(size)).toBe(statSync(join(deadDir(), `${refusedId}.eml`)).size);
    expect(Date.parse(movedAt!)).toBeGreaterThan(Date.now() - 120_000);
    expect(reason).toBe('the edge refused POST /relay/v1/inbound (400): invalid meta: meta.rcpt_to: must list at least one recipient');
    expect(run.stderr).toMatch(new RegExp(`^1 dead letter \\(\\d+ bytes of messages\\) in ${deadDir().replace(/[/.]/g, '\\$&')}:`));
  });

  test('while dead/ holds more than relay_node.spool.max_dead_letter_bytes, new mail is answered 452 4.3.1; cleared, it is accepted again', async () => {
    const raw = await openRaw(node.port);
    try {
      expect(await raw.reply()).toMatch(/^220 /);
      expect(await raw.command('EHLO client.test')).toMatch(/^250/);
      expect(await raw.command('MAIL FROM:<ann@sender.example>')).toBe('452 4.3.1 Insufficient system storage: messages refused by the platform await an operator, try again later');
    } finally {
      raw.close();
    }
    // The operator has looked and clears the folder; the next heartbeat recounts it.
    rmSync(deadDir(), { recursive: true, force: true });
    await eventually(listedNode, (n) => n.dead_letters === 0 && n.dead_letter_bytes === 0, 10_000);
    const sent = await eventually(
      () => sendMessage({ port: node.port, from: 'after@sender.example', to: TO, message: `From: <after@sender.example>\r\nTo: <${TO}>\r\nSubject: after\r\n\r\nHello.\r\n` }),
      (result) => result.response?.startsWith('250 ') === true,
      10_000,
    );
    expect(sent.response).toMatch(/^250 2\.6\.0 /);
    await eventually(() => inboundRecords(stack, key), (list) => list.some((r) => r.sender === 'after@sender.example'), 15_000);
  });
});

describe('`edgemail relay dead-letters` and a reason quoting a sender\'s bytes', () => {
  test('prints control characters escaped (one line, one column, no terminal sequence), even from a reason an older node stored raw', async () => {
    const state = mkdtempSync(join(tmpdir(), 'relay-dead-escape-'));
    try {
      const dead = join(spoolDir(state), 'dead');
      mkdirSync(dead, { recursive: true });
      const id = '0000000001-escape';
      writeFileSync(join(dead, `${id}.eml`), 'Subject: x\r\n\r\nx\r\n');
      writeFileSync(join(dead, `${id}.json`), '{}');
      writeFileSync(join(dead, `${id}.reason.txt`), '2026-11-26T10:00:00.000Z invalid meta: parsed.headers.x\u001b[2J\u001b]0;owned\u0007\tname\nsecond line\n');
      const run = await edgemail(['relay', 'dead-letters', '--state-dir', state]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
      const rows = run.stdout.trimEnd().split('\n');
      expect(rows).toHaveLength(2);
      expect(rows[1]!.split('\t')).toEqual([id, '17', '2026-11-26T10:00:00.000Z', 'invalid meta: parsed.headers.x\\x1b[2J\\x1b]0;owned\\x07\\x09name\\x0asecond line']);
    } finally {
      rmSync(state, { recursive: true, force: true });
    }
  });
});
