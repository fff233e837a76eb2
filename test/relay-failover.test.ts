// Failover between two installation-wide relay nodes (issue 30): each node is
// the packaged node's bundle running in its own process, so a SIGKILL is a
// real crash (no stop(), no last report, no drain). Outbound: one node dies
// in the middle of 500 deliveries; what it had leased and not reported goes to
// the other node once its lease (8 s here) runs out; every recipient ends
// `sent` exactly once in the email log, and the receiving MX saw no recipient
// twice beyond the deliveries the dead node had made and not yet reported
// (counted and printed). Inbound: a node that accepted mail (250) while the
// edge was out of its reach and then died forwards all of it after a restart.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer as createTcpServer, connect, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { packRelayNode } from '../relay-node/scripts/pack.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import type * as SmtpServerModule from '../relay-node/node_modules/smtp-server/dist/cjs/smtp-server.js';
import { registerProvenDomain } from './support/domain-ownership.js';
import { freePort } from './support/global-setup.js';
import { enroll, makeInstallationWide } from './support/relay.js';
import { inboundRecords } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const { SMTPServer } = createRequire(new URL('../relay-node/package.json', import.meta.url))('smtp-server') as typeof SmtpServerModule;

const MESSAGES = 500;
// Short, so the survivor takes over soon; long enough that its own claimed-ahead jobs never outlive theirs on a loaded machine.
const LEASE_S = 8;
/** The receiving MX holds each DATA reply this long, so that deliveries are in flight when the node dies. */
const DATA_DELAY_MS = 30;
const INBOUND = 20;
const DOMAIN = `failover-${crypto.randomUUID().slice(0, 6)}.test`;
const work = mkdtempSync(join(tmpdir(), 'edgemail-relay-failover-'));

let stack: TestStack;
let dns: TestDnsServer;
let bundle: string;
let projectId: string;
let sender: string;
let reader: string;
let rx: { port: number; arrivals: { rcpt: string; helo: string }[]; close(): Promise<void> };
/** Node A reaches the edge through this, so that the edge can be taken out of its reach alone. */
let gate: { url: string; open: boolean; close(): Promise<void> };
const nodes: Record<'a' | 'b', { id: string; stateDir: string; port: number; edgeUrl: string }> = {} as never;
const children: ChildProcess[] = [];

async function startReceiver(): Promise<typeof rx> {
  const arrivals: { rcpt: string; helo: string }[] = [];
  const server = new SMTPServer({
    logger: false, disableReverseLookup: true, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'], maxClients: 200,
    onData(stream, session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => setTimeout(() => {
        arrivals.push({ rcpt: session.envelope.rcptTo[0]?.address ?? '', helo: session.hostNameAppearsAs });
        callback(null, 'queued');
      }, DATA_DELAY_MS));
    },
  });
  // A node SIGKILLed mid-delivery resets its connections: smtp-server emits that as an error, expected here.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { port: (server.server.address() as AddressInfo).port, arrivals, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A TCP relay to the edge that can be shut: closed, it drops every connection, open and new. */
async function startGate(target: string): Promise<typeof gate> {
  const upstream = new URL(target);
  const live = new Set<Socket>();
  let open = true;
  const server: TcpServer = createTcpServer((client) => {
    if (!open) return client.destroy();
    const edge = connect(Number(upstream.port), upstream.hostname);
    for (const s of [client, edge]) {
      live.add(s);
      s.on('close', () => live.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(edge).pipe(client);
    client.on('close', () => edge.destroy());
    edge.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get open() { return open; },
    set open(value: boolean) {
      open = value;
      if (!value) for (const s of live) s.destroy();
    },
    close: () => new Promise<void>((r) => { for (const s of live) s.destroy(); server.close(() => r()); }),
  };
}

interface RunningNode { child: ChildProcess; output: () => string; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }> }

/** The packaged node's `start` in its own process, as the unit runs it; resolves once it says it started. */
async function startNode(name: 'a' | 'b'): Promise<RunningNode> {
  const node = nodes[name];
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_') && !k.startsWith('EDGEMAIL_') && k !== 'NODE_OPTIONS'));
  const child = spawn(process.execPath, [bundle, 'start', '--state-dir', node.stateDir, '--host', '127.0.0.1', '--port', String(node.port), '--submission-port', 'off'], {
    env: {
      ...base,
      SERVICE_SERVER_PUBLIC_URL: stack.url,
      SERVICE_DNS_SERVERS: dns.address,
      SERVICE_OUTBOUND_SMARTHOST: `127.0.0.1:${rx.port}`,
      SERVICE_OUTBOUND_HELO_NAME: `mx-${name}.failover.test`,
      SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false',
      SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '0',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  await eventually(async () => output, (o) => o.includes('"msg":"relay node started"') || child.exitCode !== null, 30_000);
  expect(output).toContain('"msg":"relay node started"');
  return { child, output: () => output, exited };
}

/** SIGKILL, and proof that the process is gone: its exit by that signal, no such pid, its port closed. */
async function kill(node: RunningNode, port: number): Promise<void> {
  node.child.kill('SIGKILL');
  expect(await node.exited).toEqual({ code: null, signal: 'SIGKILL' });
  expect(() => process.kill(node.child.pid!, 0)).toThrow(/ESRCH/);
  expect(await new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  })).toBe(false);
}

async function enrolled(name: 'a' | 'b', manager: string, edgeUrl: string) {
  const node = await enroll(stack, manager, `mx-failover-${name}`);
  await makeInstallationWide(stack, node.id);
  const stateDir = mkdtempSync(join(work, `${name}-`));
  await writeNodeState(stateDir, { edge_url: edgeUrl, node_id: node.id, name: `mx-failover-${name}`, token: node.token, enrolled_at: new Date().toISOString() });
  nodes[name] = { id: node.id, stateDir, port: await freePort(), edgeUrl };
}

beforeAll(async () => {
  // The node as it ships (one bundled file), made while the stack starts.
  const packed = packRelayNode(join(work, 'pack')).then(() => join(work, 'pack', 'edgemail-relay-node', 'dist', 'edgemail-relay.js'));
  stack = await startTestStack({
    settings: {
      SERVICE_OUTBOUND_LEASE: `${LEASE_S}s`,
      SERVICE_OUTBOUND_RETRY_DELAY: '1s',
      SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000',
      SERVICE_RATELIMIT_API_PER_MINUTE: '100000',
    },
  });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'relay-failover');
  projectId = tenant.project.id;
  const manager = (await tenant.key(['relay:write', 'domains:write'])).token;
  sender = (await tenant.key(['emails:write'])).token;
  reader = (await tenant.key(['emails:read', 'inbound:read'])).token;
  const domainId = await registerProvenDomain(stack, manager, DOMAIN);
  await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domainId]);
  // 500 recipients at once: no plan limit in the way.
  await stack.sql.query('UPDATE plans SET hourly_email_limit = 0, daily_email_limit = 0 WHERE id = (SELECT plan_id FROM projects WHERE id = $1)', [projectId]);
  dns = await startDnsServer();
  rx = await startReceiver();
  gate = await startGate(stack.url);
  await enrolled('a', manager, gate.url);
  await enrolled('b', manager, stack.url);
  bundle = await packed;
}, 180_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await gate?.close();
  await rx?.close();
  await dns?.close();
  await stack?.stop();
  rmSync(work, { recursive: true, force: true });
});

describe('two installation-wide nodes, one SIGKILLed', () => {
  test(`outbound: ${MESSAGES} recipients, one node killed mid-delivery; its leases pass to the other; every recipient sent exactly once; duplicates at the MX only among the killed node's unreported deliveries`, async () => {
    const started = Date.now();
    const [a, b] = await Promise.all([startNode('a'), startNode('b')]);
    const recipients = Array.from({ length: MESSAGES }, (_, i) => `rcpt-${i}@example.org`);
    const ids: string[] = [];
    for (let i = 0; i < MESSAGES; i += 50) {
      const sent = await stack.call('POST', '/api/v1/emails/send', {
        token: sender, body: { from: `news@${DOMAIN}`, to: recipients.slice(i, i + 50), subject: `failover ${i / 50}`, text: 'Hello.' },
      });
      expect(sent.status, JSON.stringify(sent.body)).toBe(201);
      ids.push(...(sent.body.emails as { id: string }[]).map((e) => e.id));
    }
    expect(ids).toHaveLength(MESSAGES);

    // Node A dies once it has delivered a share, while both nodes are busy.
    const fromA = () => rx.arrivals.filter((x) => x.helo === 'mx-a.failover.test').length;
    await eventually(async () => fromA(), (n) => n >= 60, 60_000);
    await kill(a, nodes.a.port);
    const killedAt = Date.now();
    const arrivedAtKill = rx.arrivals.length;
    // What A held and never reported: claimed, in delivery, or delivered but not yet reported.
    const { rows: [held] } = await stack.sql.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM emails WHERE lease_node_id = $1 AND status = 'sending'", [nodes.a.id]);
    const inFlightAtKill = held!.n;
    expect(inFlightAtKill).toBeGreaterThan(0);

    // B takes A's recipients once their leases run out, and finishes the lot.
    const statuses = async () => (await stack.sql.query<{ status: string; n: number }>(
      'SELECT status, count(*)::int AS n FROM emails WHERE id = ANY($1::uuid[]) GROUP BY status', [ids])).rows;
    await eventually(statuses, (rows) => rows.length === 1 && rows[0]!.status === 'sent' && rows[0]!.n === MESSAGES, 60_000);
    const doneAt = Date.now();

    // The email log: one `sent` attempt per recipient, and no other outcome recorded for any.
    const { rows: attempts } = await stack.sql.query<{ email_id: string; sent: number; others: number }>(
      `SELECT e.id AS email_id, count(a.*) FILTER (WHERE a.outcome = 'sent')::int AS sent, count(a.*) FILTER (WHERE a.outcome <> 'sent')::int AS others
         FROM emails e LEFT JOIN email_attempts a ON a.email_id = e.id WHERE e.id = ANY($1::uuid[]) GROUP BY e.id`, [ids]);
    expect(attempts).toHaveLength(MESSAGES);
    expect(attempts.filter((r) => r.sent !== 1)).toEqual([]);
    // A's leases ended with the lease, not a failure: nobody's record says deferred or failed.
    expect(attempts.filter((r) => r.others !== 0)).toEqual([]);
    // Through the API as the sender reads it.
    for (const id of [ids[0]!, ids[MESSAGES - 1]!]) {
      expect((await stack.call('GET', `/api/v1/emails/${id}`, { token: reader })).body.email.status).toBe('sent');
    }
    const byNode = await stack.sql.query<{ node_id: string; n: number }>(
      "SELECT node_id, count(*)::int AS n FROM email_attempts WHERE email_id = ANY($1::uuid[]) AND outcome = 'sent' GROUP BY node_id", [ids]);
    const sentBy = Object.fromEntries(byNode.rows.map((r) => [r.node_id === nodes.a.id ? 'a' : r.node_id === nodes.b.id ? 'b' : r.node_id, r.n]));

    // The MX: every recipient at least once; a second copy only of what A held at the kill.
    const seen = new Map<string, number>();
    for (const x of rx.arrivals) seen.set(x.rcpt, (seen.get(x.rcpt) ?? 0) + 1);
    expect([...seen.keys()].sort()).toEqual([...recipients].sort());
    const duplicates = [...seen.values()].reduce((sum, n) => sum + (n - 1), 0);
    expect([...seen.values()].every((n) => n <= 2)).toBe(true);
    expect(duplicates).toBeLessThanOrEqual(inFlightAtKill);
    console.log(`relay-failover: ${MESSAGES} recipients; node A killed after ${arrivedAtKill} arrivals at the MX (${fromA()} from A); `
      + `${inFlightAtKill} held by A unreported at the kill; ${duplicates} delivered twice at the MX; sent by A ${sentBy.a ?? 0}, by B ${sentBy.b ?? 0}; `
      + `all sent ${((doneAt - killedAt) / 1000).toFixed(1)} s after the kill (lease ${LEASE_S} s), ${((doneAt - started) / 1000).toFixed(1)} s in all`);
    b.child.kill('SIGTERM');
    expect((await b.exited).code).toBe(0);
  }, 150_000);

  test(`inbound: ${INBOUND} messages accepted (250) by a node that cannot reach the edge, which is then SIGKILLed, are forwarded once after it restarts`, async () => {
    gate.open = false;
    let a = await startNode('a');
    const subjects = Array.from({ length: INBOUND }, (_, i) => `failover-in-${i}`);
    for (const subject of subjects) {
      const sent = await sendMessage({
        port: nodes.a.port, from: 'ann@sender.example', to: `support@${DOMAIN}`,
        message: `From: Ann <ann@sender.example>\r\nTo: <support@${DOMAIN}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@sender.example>\r\n\r\nHello.\r\n`,
      });
      expect(sent.response, JSON.stringify(sent.error)).toMatch(/^250 /);
    }
    const spooled = () => readdirSync(join(nodes.a.stateDir, 'spool')).filter((n) => n.endsWith('.eml')).length;
    expect(spooled()).toBe(INBOUND);
    await kill(a, nodes.a.port);
    expect(spooled()).toBe(INBOUND);
    expect((await inboundRecords(stack, reader)).filter((r) => subjects.includes(r.subject))).toEqual([]);

    gate.open = true;
    a = await startNode('a');
    const records = await eventually(async () => (await inboundRecords(stack, reader)).filter((r) => subjects.includes(r.subject)), (r) => r.length >= INBOUND, 30_000);
    expect(records.map((r) => r.subject).sort()).toEqual([...subjects].sort());
    await eventually(async () => spooled(), (n) => n === 0, 10_000);
    a.child.kill('SIGTERM');
    expect((await a.exited).code).toBe(0);
  }, 90_000);
});
