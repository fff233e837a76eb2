// Outbound manners of a real MTA (issue 14, item 4), as a real SMTP receiver
// sees a whole node deliver: the EHLO name is `outbound.helo_name` (else the
// host of server.public_url, an address as a literal) on every route, a node
// whose name is not fully qualified does not start, and pooled sessions end
// with QUIT when idle and when the node stops. The edge is the stand-in of the
// outbound routes (fake-edge.ts); the SMTP on both sides is real.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '@edgemail/shared';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startDnsServer, type TestDnsServer } from '../../test-support/dns-server.js';
import { createDnsResolver } from '../inbound/mail-auth/dns-resolver.js';
import { startRelayNode } from '../node.js';
import type { Log } from '../log.js';
import { writeNodeState } from '../state/index.js';
import { processJob } from './process-job.js';
import { makeJob } from '../../test-support/jobs.js';
import { startFakeEdge, type FakeEdge } from '../../test-support/fake-edge.js';
import { startReceiver, type Receiver } from '../../test-support/receiver.js';
import { TransportPool } from './transport-pool.js';

const silent: Log = { debug() {}, info() {}, warn() {}, error() {} };
let edge: FakeEdge;
let dns: TestDnsServer;
let dir: string;
const receivers: Receiver[] = [];

beforeAll(async () => {
  edge = await startFakeEdge();
  dns = await startDnsServer({ 'mx.dest.test': { A: ['127.0.0.1'] } });
  dir = await mkdtemp(join(tmpdir(), 'edgemail-outbound-manners-'));
});

afterAll(async () => {
  await Promise.all(receivers.map((r) => r.close()));
  await edge?.close();
  await dns?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function receiver(): Promise<Receiver> {
  const rx = await startReceiver({ starttls: false });
  receivers.push(rx);
  return rx;
}

async function node(name: string, env: Record<string, string>) {
  const stateDir = join(dir, name);
  await writeNodeState(stateDir, { edge_url: edge.url, node_id: `node-${name}`, name, token: edge.token, enrolled_at: new Date().toISOString() });
  const config = loadConfig({
    SERVICE_SERVER_PUBLIC_URL: 'https://mail.edgemail.test',
    SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false',
    SERVICE_DNS_SERVERS: dns.address,
    // The receivers of this file listen on loopback.
    SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true',
    SERVICE_SMTP_SERVERS_ALLOW_PRIVATE_TARGETS: 'true',
    ...env,
  }).config;
  // hostName is the inbound listener's name; the EHLO name when delivering comes from the settings.
  return startRelayNode({ stateDir, config, port: 0, host: '127.0.0.1', hostName: 'inbound.acme.test', log: silent, drainMs: 200, heartbeatIntervalMs: 60_000, outbound: { idlePollMs: 50 } });
}

/** A job routed to a project's (or the pool's) SMTP server on loopback. */
const smtpJob = (port: number, source: 'project' | 'pool') =>
  makeJob('ann@example.org', { route: { kind: 'smtp', source, host: '127.0.0.1', port, security: 'none', username: null, password: null } });

let domains = 0;
/** A job to a fresh domain whose only MX is mx.dest.test (127.0.0.1). */
function mxJob(): ReturnType<typeof makeJob> {
  const domain = `d${++domains}.dest.test`;
  dns.set(domain, { MX: [{ preference: 10, exchange: 'mx.dest.test' }] });
  return makeJob(`ann@${domain}`);
}

test('MX, project server and shared pool: EHLO outbound.helo_name; at stop each pooled session says QUIT', async () => {
  const [mx, project, pool] = [await receiver(), await receiver(), await receiver()];
  const relay = await node('routes', { SERVICE_OUTBOUND_HELO_NAME: 'Relay1.Example.NET', SERVICE_OUTBOUND_MX_PORT: String(mx.port) });
  try {
    const before = edge.results.length;
    edge.queue.push(mxJob(), smtpJob(project.port, 'project'), smtpJob(pool.port, 'pool'));
    const results = (await edge.waitForResults(before + 3)).slice(before);
    expect(results.map((r) => r.outcome)).toEqual(['sent', 'sent', 'sent']);
  } finally {
    await relay.stop();
  }
  for (const rx of [mx, project, pool]) {
    expect(rx.messages.map((m) => m.helo)).toEqual(['relay1.example.net']);
    // Pooled: the session outlived its message, and the node's stop ended it politely
    // (the receiver notes the close a moment after the node has seen the 221).
    await vi.waitFor(() => expect(rx.sessions[0]?.closed).toBe(true), { timeout: 5000, interval: 20 });
    expect(rx.sessions).toEqual([{ commands: ['EHLO', 'MAIL', 'RCPT', 'DATA', 'QUIT'], helo: 'relay1.example.net', closed: true }]);
  }
});

test('smarthost: EHLO is the host of server.public_url when outbound.helo_name is empty', async () => {
  const smarthost = await receiver();
  const relay = await node('smarthost', { SERVICE_OUTBOUND_SMARTHOST: `127.0.0.1:${smarthost.port}` });
  try {
    const before = edge.results.length;
    edge.queue.push(makeJob('bob@example.org'));
    expect((await edge.waitForResults(before + 1)).slice(before).map((r) => r.outcome)).toEqual(['sent']);
  } finally {
    await relay.stop();
  }
  expect(smarthost.sessions.map((s) => [s.helo, s.commands.at(-1)])).toEqual([['mail.edgemail.test', 'QUIT']]);
});

test('a public URL on an IP address (pnpm dev): EHLO [127.0.0.1], an address literal', async () => {
  const smarthost = await receiver();
  const relay = await node('literal', { SERVICE_SERVER_PUBLIC_URL: 'http://127.0.0.1:8787', SERVICE_OUTBOUND_SMARTHOST: `127.0.0.1:${smarthost.port}` });
  try {
    const before = edge.results.length;
    edge.queue.push(makeJob('cy@example.org'));
    expect((await edge.waitForResults(before + 1)).slice(before).map((r) => r.outcome)).toEqual(['sent']);
  } finally {
    await relay.stop();
  }
  expect(smarthost.messages.map((m) => m.helo)).toEqual(['[127.0.0.1]']);
});

test.each([
  [{ SERVICE_OUTBOUND_HELO_NAME: 'vm' }, 'invalid setting outbound.helo_name (SERVICE_OUTBOUND_HELO_NAME): "vm" is not a fully qualified domain name (must have at least two labels (example.com))'],
  [{ SERVICE_OUTBOUND_HELO_NAME: 'relay_1.example.net' }, 'invalid setting outbound.helo_name (SERVICE_OUTBOUND_HELO_NAME): "relay_1.example.net" is not a fully qualified domain name (label "relay_1" may hold only letters, digits and hyphens)'],
  [{ SERVICE_SERVER_PUBLIC_URL: 'http://localhost:8787' }, 'invalid setting outbound.helo_name (SERVICE_OUTBOUND_HELO_NAME): not set, and the host of server.public_url ("localhost") is not a fully qualified domain name (must have at least two labels (example.com)); set it to this node\'s name, the one its outbound address resolves back to'],
])('a name that is not fully qualified: the node refuses to start, naming the setting (%o)', async (env, message) => {
  const claims = edge.claims.length;
  const started = node(`refused-${crypto.randomUUID().slice(0, 8)}`, env);
  await expect(started).rejects.toThrow(ConfigError);
  await expect(started).rejects.toThrow(message);
  expect(edge.claims.length).toBe(claims);
});

test('a pooled session left idle ends with QUIT, not a dropped connection', async () => {
  const mx = await receiver();
  const transports = new TransportPool({ idleMs: 300 });
  try {
    const deps = {
      settings: { captureDir: '', smarthost: '', mxPort: mx.port, requireTls: false, allowPrivateProjectServers: true, allowPrivateMx: true },
      resolve: createDnsResolver([dns.address], { cache: false }),
      hostName: 'relay1.example.net',
      log: silent,
      transports,
    };
    expect((await processJob(mxJob(), deps)).outcome).toBe('sent');
    await vi.waitFor(() => expect(mx.sessions[0]?.closed).toBe(true), { timeout: 10_000, interval: 50 });
    expect(mx.sessions).toEqual([{ commands: ['EHLO', 'MAIL', 'RCPT', 'DATA', 'QUIT'], helo: 'relay1.example.net', closed: true }]);
  } finally {
    await transports.stop();
  }
});
