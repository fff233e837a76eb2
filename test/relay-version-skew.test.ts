// Version skew between the edge and its relay nodes (issue 30,
// docs/relay-protocol.md "Versions"): today's node against a newer edge, whose
// claim answer carries a field it never heard of and, in one job, a route kind
// it does not know (a loopback proxy between the two rewrites the real edge's
// answer, as that newer edge would write it); and a node speaking a relay
// contract the edge does not serve, refused with a message that names the
// remedy, said once in its log and shown by /readyz.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import type * as SmtpServerModule from '../relay-node/node_modules/smtp-server/dist/cjs/smtp-server.js';
import { registerProvenDomain } from './support/domain-ownership.js';
import { enroll, makeInstallationWide } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const { SMTPServer } = createRequire(new URL('../relay-node/package.json', import.meta.url))('smtp-server') as typeof SmtpServerModule;

const DOMAIN = `skew-${crypto.randomUUID().slice(0, 6)}.test`;
const work = mkdtempSync(join(tmpdir(), 'edgemail-relay-skew-'));
let stack: TestStack;
let dns: TestDnsServer;
let manager: string;
let sender: string;
let receiver: { port: number; arrivals: string[]; close(): Promise<void> };
let proxy: { url: string; rewrite: boolean; rewrites: number; close(): Promise<void> };
const nodes: RelayNode[] = [];

async function startReceiver(): Promise<typeof receiver> {
  const arrivals: string[] = [];
  const server = new SMTPServer({
    logger: false, disableReverseLookup: true, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'],
    onData(stream, session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        arrivals.push(session.envelope.rcptTo[0]?.address ?? '');
        callback(null, 'queued');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.server.address() as AddressInfo).port, arrivals, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/**
 * What a newer edge would answer a claim with: a field the node never heard of
 * at the top and in every job, and in the job for `odd@…` a route kind this
 * node does not know. Everything else is the real edge's answer.
 */
function asNewerEdge(answer: { jobs: Record<string, any>[] }): unknown {
  return {
    ...answer,
    next_poll_ms: 250,
    jobs: answer.jobs.map((job) => ({
      ...job,
      priority: 'bulk',
      message: { ...job.message, list_id: '<news.skew.test>' },
      ...(job.envelope.to.startsWith('odd@') ? { route: { kind: 'lmtp', socket: '/run/edgemail/lmtp.sock' } } : {}),
    })),
  };
}

/** Forwards every request to the edge as it is; rewrites claim answers while `rewrite` is on. */
async function startProxy(target: string): Promise<typeof proxy> {
  const upstream = new URL(target);
  const state: typeof proxy = { url: '', rewrite: true, rewrites: 0, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: { ...req.headers, host: upstream.host, 'accept-encoding': 'identity' } }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        let body = Buffer.concat(chunks);
        const headers = { ...answer.headers };
        if (state.rewrite && req.url === '/relay/v1/outbound/claim' && answer.statusCode === 200) {
          const parsed = JSON.parse(body.toString('utf8')) as { jobs: Record<string, any>[] };
          if (parsed.jobs.length) {
            body = Buffer.from(JSON.stringify(asNewerEdge(parsed)));
            state.rewrites++;
          }
          delete headers['content-encoding'];
        }
        delete headers['transfer-encoding'];
        headers['content-length'] = String(body.length);
        res.writeHead(answer.statusCode ?? 502, headers);
        res.end(body);
      });
    });
    out.on('error', () => { res.writeHead(502); res.end(); });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.close = () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
  return state;
}

/** An enrolled, installation-wide node's state directory whose node.json points at `edgeUrl`. */
async function enrolledState(name: string, edgeUrl: string): Promise<string> {
  const enrolled = await enroll(stack, manager, name);
  await makeInstallationWide(stack, enrolled.id);
  const dir = mkdtempSync(join(work, `${name}-`));
  await writeNodeState(dir, { edge_url: edgeUrl, node_id: enrolled.id, name, token: enrolled.token, enrolled_at: new Date().toISOString() });
  return dir;
}

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_OUTBOUND_RETRY_DELAY: '1s', SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000' } });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'relay-skew');
  manager = (await tenant.key(['relay:write', 'domains:write'])).token;
  sender = (await tenant.key(['emails:write', 'emails:read'])).token;
  const domainId = await registerProvenDomain(stack, manager, DOMAIN);
  await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domainId]);
  dns = await startDnsServer();
  receiver = await startReceiver();
  proxy = await startProxy(stack.url);
}, 120_000);

afterAll(async () => {
  for (const node of nodes) await node.stop().catch(() => undefined);
  await proxy?.close();
  await receiver?.close();
  await dns?.close();
  await stack?.stop();
  rmSync(work, { recursive: true, force: true });
});

const record = async (id: string) => (await stack.call('GET', `/api/v1/emails/${id}`, { token: sender })).body.email;

describe('today\'s node against a newer edge', () => {
  test('a claim with an added field and an unknown route kind in one job: the other jobs are delivered, the odd one is reported back naming why and goes to a node that reads it', async () => {
    const logs: LogLine[] = [];
    const stateDir = await enrolledState('mx-skew-today', proxy.url);
    nodes.push(await startTestNode({
      stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs),
      env: { SERVICE_OUTBOUND_SMARTHOST: `127.0.0.1:${receiver.port}`, SERVICE_OUTBOUND_HELO_NAME: 'mx-skew.relay-test.test', SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false' },
      // One claim takes all five recipients.
      outbound: { concurrency: 10 },
    }));
    const to = ['ann', 'bob', 'odd', 'cid', 'dee'].map((n) => `${n}@example.org`);
    const sent = await stack.call('POST', '/api/v1/emails/send', { token: sender, body: { from: `news@${DOMAIN}`, to, subject: 'skew', text: 'Hello from a newer edge.' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const ids = Object.fromEntries((sent.body.emails as { id: string; recipient: string }[]).map((e) => [e.recipient.split('@')[0]!, e.id]));

    // The four the node can read arrive and are recorded sent.
    await eventually(async () => [...receiver.arrivals].sort(), (a) => a.length >= 4, 20_000);
    for (const name of ['ann', 'bob', 'cid', 'dee']) await eventually(() => record(ids[name]!), (e) => e.status === 'sent', 10_000);
    // The odd one was never delivered: it is back in the queue with the node's reason in its record.
    const odd = await eventually(() => record(ids.odd!), (e) => e.status === 'queued' && e.attempts >= 1, 10_000);
    // (Each claim of it while the edge still sends that kind is one more such attempt, after the retry delay.)
    expect(odd.delivery_attempts.length).toBeGreaterThanOrEqual(1);
    for (const attempt of odd.delivery_attempts) {
      expect(attempt).toMatchObject({
        outcome: 'deferred', smtp_code: null, server: null,
        reply: 'not delivered: this relay node (relay contract 1) cannot read the job (route.kind: unknown route kind "lmtp" (this node knows "mx" and "smtp")); upgrade the node',
      });
    }
    expect(receiver.arrivals.filter((r) => r.startsWith('odd@'))).toEqual([]);
    expect(proxy.rewrites).toBeGreaterThanOrEqual(1);
    expect(logs.filter((l) => l.message.startsWith('outbound job skipped'))[0]?.fields).toMatchObject({ email_id: ids.odd, error: expect.stringContaining('route.kind') });
    // No line says the claim as a whole was refused.
    expect(logs.filter((l) => /outbound claim failed|does not fit the relay protocol/.test(`${l.message} ${JSON.stringify(l.fields)}`))).toEqual([]);

    // The edge's answers as this node reads them (an upgraded edge no longer sends that job a kind it cannot read):
    // the recipient is claimed again after the retry delay and delivered once.
    proxy.rewrite = false;
    const delivered = await eventually(() => record(ids.odd!), (e) => e.status === 'sent', 20_000);
    const outcomes = delivered.delivery_attempts.map((a: { outcome: string }) => a.outcome);
    expect(outcomes.at(-1)).toBe('sent');
    expect(new Set(outcomes.slice(0, -1))).toEqual(new Set(['deferred']));
    expect(receiver.arrivals.filter((r) => r === 'odd@example.org')).toHaveLength(1);
    expect([...receiver.arrivals].sort()).toEqual([...to].sort());
  });
});

describe('a node speaking a relay contract the edge does not serve', () => {
  test('the edge refuses every call with 426 naming the served range and the side to upgrade; headers it cannot read are 400; a node with no header is served as contract 1', async () => {
    const enrolled = await enroll(stack, manager, 'mx-skew-raw');
    const call = (headers: Record<string, string>) => fetch(`${stack.url}/relay/v1/domains`, { headers: { authorization: `Bearer ${enrolled.token}`, ...headers } });
    const newer = await call({ 'Edgemail-Relay-Contract': '2' });
    expect(newer.status).toBe(426);
    expect(await newer.json()).toEqual({ error: 'relay contract 2 is not served: this edge serves contract 1; upgrade the edge first (or run a node of contract 1)' });
    for (const bad of ['0', 'two', '1.5', '']) {
      const refused = await call({ 'Edgemail-Relay-Contract': bad });
      expect(refused.status, bad).toBe(400);
      expect((await refused.json()).error).toContain('edgemail-relay-contract must be a whole number from 1');
    }
    expect((await call({})).status).toBe(200);
    expect((await call({ 'Edgemail-Relay-Contract': '1' })).status).toBe(200);
    // Refused before the credential is even looked up: a contract the edge cannot read is never acted on.
    expect((await fetch(`${stack.url}/relay/v1/domains`, { headers: { 'Edgemail-Relay-Contract': '7' } })).status).toBe(426);
  });

  test('the node logs the refusal once (not every retry), keeps running, and /readyz is 503 naming it', async () => {
    const logs: LogLine[] = [];
    const stateDir = await enrolledState('mx-skew-future', stack.url);
    let refusals = 0;
    const counting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (res.status === 426) refusals++;
      return res;
    };
    const node = await startTestNode({
      stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), contract: 9, fetch: counting, metricsPort: 0,
      env: { SERVICE_RELAY_NODE_METRICS_ENABLED: 'true', SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false' },
    });
    nodes.push(node);
    const refusal = 'relay contract 9 is not served: this edge serves contract 1; upgrade the edge first (or run a node of contract 1)';
    // Heartbeats every 300 ms, claims every 500 ms, domain refreshes: many refusals, one line.
    await eventually(async () => refusals, (n) => n >= 10, 15_000);
    const said = logs.filter((l) => l.level !== 'debug' && JSON.stringify(l).includes('relay contract 9 is not served'));
    expect(said).toEqual([{ level: 'error', message: expect.stringContaining('the edge does not serve this node\'s relay contract'), fields: { contract: 9, version: expect.any(String), refusal } }]);

    const readyz = await fetch(`http://127.0.0.1:${node.metricsPort}/readyz`);
    expect(readyz.status).toBe(503);
    expect(await readyz.json()).toEqual({ status: 'not ready', reason: `the edge refuses this node's relay contract: ${refusal}` });
  });
});
