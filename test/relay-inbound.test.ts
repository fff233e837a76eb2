// A relay node end to end against the real edge (workerd, PostgreSQL): enrolled
// through `POST /relay/v1/enroll` by the operator binary, mail in over real
// SMTP (plain and STARTTLS), records out through `/api/v1/inbound-emails`; then
// the durability promise: the edge down, mail accepted, node and edge
// restarted, nothing lost and nothing stored twice, a kill -9 survived; and a
// revocation that stops the node.
import { execFile, spawn } from 'node:child_process';
import { randomBytes, X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { repoRoot, startEdgeWorker, type EdgeWorker } from '../edge/local/edge-worker.js';
import { NodeRevokedError, readNodeState, spoolDir, type RelayNode, type RelayNodeOptions } from '../relay-node/src/index.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { freePort } from './support/global-setup.js';
import { inboundBySubject as recordsBySubject, startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';
import { registerProvenDomain } from './support/domain-ownership.js';
import { presentedFingerprint } from './support/starttls.js';

const ENCRYPTION_KEY = randomBytes(32).toString('base64');
const SETTINGS = { SERVICE_DATABASE_CRYPTO_ENCRYPTION_KEY: ENCRYPTION_KEY };
const DOMAIN = 'acme-relay.test';

let stack: TestStack;
let key: string;
let projectHeaders: { token: string };
let stateDir: string;
let dns: TestDnsServer;
const logs: LogLine[] = [];
const log = collectingLog(logs);

beforeAll(async () => {
  stack = await startTestStack({ settings: SETTINGS });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'relay-tenant');
  ({ token: key } = await tenant.key(['relay:write', 'relay:read', 'domains:write', 'inbound:read']));
  projectHeaders = { token: key };
  await registerProvenDomain(stack, key, DOMAIN);
  stateDir = mkdtempSync(join(tmpdir(), 'relay-e2e-'));
  // A sender domain whose mail may only come from 192.0.2.1 and that asks receivers to reject the rest.
  dns = await startDnsServer({
    'strict.example': { TXT: ['v=spf1 ip4:192.0.2.1 -all'] },
    '_dmarc.strict.example': { TXT: ['v=DMARC1; p=reject'] },
  });
});
afterAll(async () => {
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const cli = (args: string[], env: Record<string, string> = {}) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', 'edge/cli/main.ts', ...args], { cwd: repoRoot, env: { ...process.env, ...env } });

/** The node in this process, on a free port, with short periods so the test does not wait on 30 s timers. */
function startNode(extra: Partial<RelayNodeOptions> = {}): Promise<RelayNode> {
  return startTestNode({ stack, stateDir, dnsAddress: dns.address, log, hostName: 'mx.relay-e2e.test', ...extra });
}

const mail = (subject: string, extra = '') =>
  `From: Ann <ann@sender.example>\r\nTo: <support@${DOMAIN}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@sender.example>\r\n${extra}\r\nHello from ${subject}.\r\n`;

const inboundBySubject = () => recordsBySubject(stack, key);

/** Every (spool_id) stored, to see that none is there twice. */
async function storedSpoolIds(): Promise<string[]> {
  const { rows } = await stack.sql.query('SELECT spool_id FROM inbound_emails ORDER BY spool_id');
  return rows.map((r) => r.spool_id as string);
}

describe('a relay node against the real edge', () => {
  let node: RelayNode | undefined;
  let nodeId: string;

  afterAll(async () => {
    await node?.stop();
  });

  test('enrols with the operator binary: prints its id, keeps the credential 0600 in a 0700 directory', async () => {
    const { stdout } = await cli(['relay', 'enroll', '--edge', stack.url, '--key', key, '--name', 'mx-e2e', '--state-dir', stateDir]);
    nodeId = stdout.trim();
    expect(nodeId).toMatch(/^[0-9a-f-]{36}$/);
    expect(statSync(stateDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(stateDir, 'node.json')).mode & 0o777).toBe(0o600);
    const state = await readNodeState(stateDir);
    expect(state).toMatchObject({ node_id: nodeId, edge_url: stack.url, name: 'mx-e2e' });
    expect(state.token).toMatch(/^myr_/);
    // Enrolling again over it needs --force.
    await expect(cli(['relay', 'enroll', '--edge', stack.url, '--key', key, '--state-dir', stateDir])).rejects.toMatchObject({ stderr: expect.stringContaining('--force') });
    // The operator makes it an installation-wide MX, which gets the shared certificate.
    await cli(['relay', 'scope', '--node', nodeId, '--installation-wide', '--database-url', stack.databaseUrl]);
  });

  test('takes mail over plain SMTP and STARTTLS; the records, raw bytes and attachment come out of the API', async () => {
    node = await startNode();
    const plain = await sendMessage({ port: node.port, from: 'ann@sender.example', to: `support@${DOMAIN}`, helo: 'client.sender.example', message: mail('plain-1') });
    expect(plain.response).toMatch(/^250 /);
    expect(plain.secure).toBe(false);
    const withAttachment = mail('tls-1', 'MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n').replace(
      /\r\nHello from tls-1\.\r\n$/,
      `\r\n--b\r\nContent-Type: text/plain\r\n\r\nHello over TLS.\r\n--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename="note.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\n${Buffer.from('%PDF-tiny').toString('base64')}\r\n--b--\r\n`,
    );
    const tls = await sendMessage({ port: node.port, tls: 'starttls', from: 'ann@sender.example', to: `support@${DOMAIN}`, message: withAttachment });
    expect(tls.response).toMatch(/^250 /);
    expect(tls.secure).toBe(true);
    const unknown = await sendMessage({ port: node.port, from: 'ann@sender.example', to: 'someone@not-registered.test', message: mail('nobody') });
    expect(unknown.error?.response).toMatch(/^550 5\.1\.1 /);

    const records = await eventually(inboundBySubject, (m) => m.has('plain-1') && m.has('tls-1'), 20_000);
    const plainRecord = records.get('plain-1')![0];
    expect(plainRecord).toMatchObject({
      status: 'received', sender: 'ann@sender.example', recipients: [`support@${DOMAIN}`], message_id: '<plain-1@sender.example>',
      text_body: 'Hello from plain-1.\n', auth: { client_ip: '127.0.0.1' }, has_raw: true,
    });
    expect(plainRecord.headers.received).toContain('from client.sender.example ([127.0.0.1])');
    const tlsRecord = records.get('tls-1')![0];
    expect(tlsRecord.attachments).toEqual([{ filename: 'note.pdf', content_type: 'application/pdf', size: 9 }]);
    expect(tlsRecord.headers.received).toMatch(/with ESMTPS \(TLSv1\.[23] /);

    const raw = await fetch(`${stack.url}/api/v1/inbound-emails/${plainRecord.id}/raw`, { headers: { authorization: `Bearer ${key}` } });
    expect(raw.status).toBe(200);
    const rawText = await raw.text();
    expect(rawText).toMatch(/^Received: from client\.sender\.example/);
    expect(rawText).toContain('Authentication-Results: mx.relay-e2e.test;');
    expect(rawText.endsWith(mail('plain-1'))).toBe(true);
    const attachment = await fetch(`${stack.url}/api/v1/inbound-emails/${tlsRecord.id}/attachments/0`, { headers: { authorization: `Bearer ${key}` } });
    expect(attachment.headers.get('content-type')).toContain('application/pdf');
    expect(await attachment.text()).toBe('%PDF-tiny');

    // Both messages left the spool once the edge acknowledged them.
    expect(readdirSync(spoolDir(stateDir)).filter((n) => n.endsWith('.eml'))).toEqual([]);
  });

  test('presents the self-signed pair the edge stored (made by the node on first use) and reports its heartbeat', async () => {
    const { rows } = await stack.sql.query(`SELECT certificate_pem FROM certificates WHERE kind = 'self_signed'`);
    expect(rows).toHaveLength(1);
    const stored = new X509Certificate(rows[0].certificate_pem as string);
    expect(stored.subjectAltName).toBe('IP Address:127.0.0.1, DNS:localhost');
    expect(await presentedFingerprint(node!.port)).toBe(stored.fingerprint256);

    const nodes = await eventually(
      async () => (await stack.call('GET', '/api/v1/relay/nodes', projectHeaders)).body.relay_nodes as any[],
      (list) => list.some((n) => n.id === nodeId && n.last_heartbeat_at && n.spool_depth === 0),
      10_000,
    );
    expect(nodes.find((n) => n.id === nodeId)).toMatchObject({
      revoked: false,
      listeners: [{ name: 'inbound', port: node!.port, tls: 'starttls', proxy_protocol: false }],
      tls: { source: 'self_signed' },
      spool_depth: 0,
    });
  });

  test('a DMARC failure on a p=reject domain is answered 550 5.7.1 and still kept, as rejected', async () => {
    const spoofed = 'From: <ceo@strict.example>\r\nTo: <support@' + DOMAIN + '>\r\nSubject: dmarc-reject\r\n\r\nPay this.\r\n';
    const result = await sendMessage({ port: node!.port, from: 'ceo@strict.example', to: `support@${DOMAIN}`, message: spoofed });
    expect(result.error?.response).toMatch(/^550 5\.7\.1 /);
    const records = await eventually(inboundBySubject, (m) => m.has('dmarc-reject'), 20_000);
    expect(records.get('dmarc-reject')![0]).toMatchObject({
      status: 'rejected', status_reason: 'dmarc policy reject',
      auth: { spf: 'fail', dkim: 'none', dmarc: 'fail', aligned: false, client_ip: '127.0.0.1' },
    });
  });

  describe('durability', () => {
    let edge: EdgeWorker | undefined;
    let edgePort: number;
    const startEdge = async () => {
      edge = await startEdgeWorker({
        vars: { SERVICE_DATABASE_URL: stack.databaseUrl, ...SETTINGS, LOCAL_NEON_BRIDGE: inject('bridgeUrl') },
        port: edgePort,
        persistTo: false,
        logLevel: 'error',
      });
    };
    const stopEdge = async () => {
      await edge?.stop();
      edge = undefined;
    };
    const spooled = () => readdirSync(spoolDir(stateDir)).filter((n) => /^[0-9a-f]{16}-[0-9a-f]{12}\.eml$/.test(n));

    beforeAll(async () => {
      // A second Worker on the same database, which the test can stop and start again at the same address.
      await node?.stop();
      node = undefined;
      edgePort = await freePort();
      await startEdge();
      const state = await readNodeState(stateDir);
      await writeNodeState(stateDir, { ...state, edge_url: edge!.url });
    });
    afterAll(async () => {
      await stopEdge();
    });

    test('edge down: mail is still accepted; restart the node, then the edge: nothing lost, nothing stored twice', async () => {
      node = await startNode();
      await stopEdge();
      for (const s of ['down-1', 'down-2', 'down-3']) {
        const sent = await sendMessage({ port: node.port, from: 'ann@sender.example', to: `support@${DOMAIN}`, message: mail(s) });
        expect(sent.response).toMatch(/^250 /);
      }
      expect(spooled()).toHaveLength(3);
      // Keep a copy of one message as it is now, to forward it a second time later.
      const copy = join(stateDir, 'copy');
      mkdirSync(copy);
      const [first] = spooled();
      const firstId = first!.slice(0, -'.eml'.length);
      for (const ext of ['.eml', '.json']) copyFileSync(join(spoolDir(stateDir), firstId + ext), join(copy, firstId + ext));

      await node.stop();
      node = await startNode(); // the edge is still down: the domain list comes from domains.json
      const more = await sendMessage({ port: node.port, from: 'ann@sender.example', to: `support@${DOMAIN}`, message: mail('down-4') });
      expect(more.response).toMatch(/^250 /);
      expect(spooled()).toHaveLength(4);

      const before = await storedSpoolIds();
      await startEdge();
      await eventually(async () => spooled().length, (n) => n === 0, 30_000);
      const records = await inboundBySubject();
      for (const s of ['down-1', 'down-2', 'down-3', 'down-4']) expect(records.get(s), s).toHaveLength(1);
      const after = await storedSpoolIds();
      expect(after.length).toBe(before.length + 4);
      expect(new Set(after).size).toBe(after.length);

      // A removal lost to a crash means one more forward: the edge says duplicate and stores nothing.
      await node.stop();
      for (const ext of ['.eml', '.json']) copyFileSync(join(copy, firstId + ext), join(spoolDir(stateDir), firstId + ext));
      logs.length = 0;
      node = await startNode();
      await eventually(async () => spooled().length, (n) => n === 0, 20_000);
      // The line follows the removal from the spool: wait for it rather than race it.
      const forwarded = await eventually(async () => logs.find((l) => l.message === 'inbound message forwarded'), (l) => l !== undefined);
      expect(forwarded!.fields).toMatchObject({ id: firstId, duplicate: true });
      expect(await storedSpoolIds()).toEqual(after);
      rmSync(copy, { recursive: true });
    });

    test('the spool survives kill -9 of a node that had answered 250', async () => {
      await node?.stop();
      node = undefined;
      await stopEdge();
      const port = await freePort();
      // The operator binary, as in production; TLS off so it does not wait for the (stopped) edge's certificate.
      const child = spawn(process.execPath, ['--import', 'tsx', 'edge/cli/main.ts', 'relay', 'start', '--state-dir', stateDir, '--port', String(port), '--submission-port', '0', '--host', '127.0.0.1'], {
        cwd: repoRoot,
        env: { ...process.env, SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false', SERVICE_SUBMISSION_TLS_ENABLED: 'false', SERVICE_SERVER_PUBLIC_URL: stack.url },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
      const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
      await eventually(async () => output, (o) => o.includes('relay node started'), 30_000);
      const sent = await sendMessage({ port, from: 'ann@sender.example', to: `support@${DOMAIN}`, message: mail('killed-1') });
      expect(sent.response).toMatch(/^250 /);
      child.kill('SIGKILL');
      expect(await exited).toBe('SIGKILL');
      expect(spooled()).toHaveLength(1);

      await startEdge();
      node = await startNode();
      const records = await eventually(inboundBySubject, (m) => m.has('killed-1'), 20_000);
      expect(records.get('killed-1')).toHaveLength(1);
      await eventually(async () => spooled().length, (n) => n === 0, 10_000);
    });

    test('a revoked node stops its listener and says so; the binary exits 3', async () => {
      node ??= await startNode();
      const revoked = await stack.call('POST', `/api/v1/relay/nodes/${nodeId}/revoke`, projectHeaders);
      expect(revoked.status).toBe(200);
      const reason = await Promise.race([node.closed, new Promise((r) => setTimeout(() => r('timeout'), 10_000))]);
      expect(reason).toBeInstanceOf(NodeRevokedError);
      const refused = await sendMessage({ port: node.port, from: 'ann@sender.example', to: `support@${DOMAIN}`, message: mail('after-revoke') });
      expect(refused.error?.code).toMatch(/ECONNREFUSED|ECONNECTION|ESOCKET/);
      node = undefined;

      const run = await cli(['relay', 'start', '--state-dir', stateDir, '--port', '0', '--submission-port', '0', '--host', '127.0.0.1']).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      expect(run.code).toBe(3);
      expect(run.stderr).toContain('revoked');
    });
  });
});
