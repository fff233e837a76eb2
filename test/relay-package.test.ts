// The relay node as an operator installs it (issue 30): `pnpm relay:pack`'s
// tarball installed with npm into an empty folder, then its `edgemail-relay`
// bin, and nothing of this checkout, enrols against the real edge, takes mail
// in, delivers mail out over SMTP, serves metrics and health, and drains on
// SIGTERM. The shipped systemd unit passes `systemd-analyze verify`.
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createRequire } from 'node:module';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { packRelayNode } from '../relay-node/scripts/pack.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { openRaw, toDataPrompt } from '../relay-node/test-support/smtp-raw.js';
import type * as SmtpServerModule from '../relay-node/node_modules/smtp-server/dist/cjs/smtp-server.js';
import { freePort } from './support/global-setup.js';
import { inboundRecords } from './support/relay-node.js';
import { registerProvenDomain } from './support/domain-ownership.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const { SMTPServer } = createRequire(new URL('../relay-node/package.json', import.meta.url))('smtp-server') as typeof SmtpServerModule;
const run = promisify(execFile);
const VERSION = (JSON.parse(readFileSync(new URL('../relay-node/package.json', import.meta.url), 'utf8')) as { version: string }).version;
const HAS_SYSTEMD_ANALYZE = spawnSync('sh', ['-c', 'command -v systemd-analyze']).status === 0;
if (!HAS_SYSTEMD_ANALYZE) console.warn('relay-package: the systemd unit check is skipped: systemd-analyze is not installed (Debian: apt-get install systemd)');

const DOMAIN = `pkg-${crypto.randomUUID().slice(0, 6)}.test`;
const work = mkdtempSync(join(tmpdir(), 'edgemail-relay-package-'));
const installDir = join(work, 'install');
const stateDir = join(work, 'state');
const bin = join(installDir, 'node_modules/.bin/edgemail-relay');

let stack: TestStack;
let dns: TestDnsServer;
let key: string;
let sender: string;
let reader: string;
let receiver: {
  port: number; arrivals: { rcpt: string; bytes: string }[];
  /** Holds each reply to DATA this long, ms (a slow receiving MX); 0 answers at once. */
  holdMs: number;
  /** Messages whose data arrived and whose reply is being held. */
  held: number;
  close(): Promise<void>;
};
const ports = { inbound: 0, submission: 0, metrics: 0 };
const children: ChildProcess[] = [];

/** The environment an operator's unit gives the node: settings only, nothing of this checkout's. */
function nodeEnv(): Record<string, string> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_') && !k.startsWith('EDGEMAIL_') && k !== 'NODE_OPTIONS'));
  return {
    ...base,
    SERVICE_SERVER_PUBLIC_URL: stack.url,
    SERVICE_DNS_SERVERS: dns.address,
    SERVICE_OUTBOUND_SMARTHOST: `127.0.0.1:${receiver.port}`,
    SERVICE_OUTBOUND_HELO_NAME: 'mx1.relay-package.test',
    SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '0',
    SERVICE_RELAY_NODE_METRICS_ENABLED: 'true',
    SERVICE_RELAY_NODE_METRICS_PORT: String(ports.metrics),
    SERVICE_RELAY_NODE_DRAIN_TIMEOUT: '3s',
  };
}

interface RunningNode { child: ChildProcess; stdout: () => string; stderr: () => string; exited: Promise<number | null> }

/** `edgemail-relay start` on the test's ports, as the unit runs it; resolves once it says it started. */
async function startNode(env: Record<string, string> = {}): Promise<RunningNode> {
  const child = spawn(bin, ['start', '--state-dir', stateDir, '--host', '127.0.0.1', '--port', String(ports.inbound),
    '--submission-port', String(ports.submission), '--submission-tls-port', 'off'], { cwd: work, env: { ...nodeEnv(), ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => (stdout += d));
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  await eventually(async () => stdout + stderr, (o) => o.includes('"msg":"relay node started"') || child.exitCode !== null, 30_000);
  expect(stdout, stderr).toContain('"msg":"relay node started"');
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

/** GET on the metrics listener with exactly this Host header. */
function metricsGet(path: string, host = `127.0.0.1:${ports.metrics}`): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: ports.metrics, path, headers: { host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** The value of one sample of the scrape, 0 when absent. */
function sample(scrape: string, line: string): number {
  const found = scrape.split('\n').find((l) => l.startsWith(`${line} `));
  return found ? Number(found.slice(line.length + 1)) : 0;
}

async function startReceiver(): Promise<typeof receiver> {
  const arrivals: { rcpt: string; bytes: string }[] = [];
  const server = new SMTPServer({
    logger: false, disableReverseLookup: true, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'],
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', async () => {
        if (state.holdMs) {
          state.held++;
          await new Promise((r) => setTimeout(r, state.holdMs));
          state.held--;
        }
        arrivals.push({ rcpt: session.envelope.rcptTo[0]?.address ?? '', bytes: Buffer.concat(chunks).toString('utf8') });
        callback(null, 'queued');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const state = { port: (server.server.address() as AddressInfo).port, arrivals, holdMs: 0, held: 0, close: () => new Promise<void>((r) => server.close(() => r())) };
  return state;
}

beforeAll(async () => {
  // The package (what an operator copies to the machine) is made and installed while the stack starts.
  const installed = (async () => {
    const started = Date.now();
    const { tarball } = await packRelayNode(join(work, 'pack'));
    mkdirSync(installDir);
    writeFileSync(join(installDir, 'package.json'), '{"private":true}\n');
    // --offline: the package needs nothing from a registry.
    await run('npm', ['i', '--offline', '--no-audit', '--no-fund', tarball], { cwd: installDir, timeout: 120_000 });
    console.log(`relay-package: packed and installed in ${Date.now() - started} ms`);
  })();
  const started = Date.now();
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000' } });
  console.log(`relay-package: stack started in ${Date.now() - started} ms`);
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'relay-package');
  key = (await tenant.key(['relay:write', 'domains:write'])).token;
  sender = (await tenant.key(['emails:write'])).token;
  reader = (await tenant.key(['emails:read', 'inbound:read'])).token;
  const domainId = await registerProvenDomain(stack, key, DOMAIN);
  await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domainId]);
  dns = await startDnsServer();
  receiver = await startReceiver();
  ports.inbound = await freePort();
  ports.submission = await freePort();
  ports.metrics = await freePort();
  await installed;
}, 180_000);

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  await receiver?.close();
  await dns?.close();
  await stack?.stop();
  rmSync(work, { recursive: true, force: true });
});

const mail = (subject: string) => `From: Ann <ann@sender.example>\r\nTo: <support@${DOMAIN}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@sender.example>\r\n\r\nHello from ${subject}.\r\n`;
const inboundSubjects = async () => (await inboundRecords(stack, reader)).map((r) => r.subject as string);

describe('the installed package', () => {
  test('is complete on its own: the bin, the unit and the guide, and no dependency to fetch', () => {
    const installed = JSON.parse(readFileSync(join(installDir, 'node_modules/edgemail-relay-node/package.json'), 'utf8'));
    expect(installed).toMatchObject({ name: 'edgemail-relay-node', version: VERSION, bin: { 'edgemail-relay': 'dist/edgemail-relay.js' } });
    expect(installed.dependencies ?? {}).toEqual({});
    // npm installed exactly one package: this one.
    expect(readdirSync(join(installDir, 'node_modules')).filter((n) => !n.startsWith('.'))).toEqual(['edgemail-relay-node']);
  });

  test('edgemail-relay --version prints the node\'s version; --help names every command', async () => {
    expect((await run(bin, ['--version'])).stdout.trim()).toBe(VERSION);
    const help = (await run(bin, ['--help'])).stdout;
    for (const command of ['enroll', 'start', 'status', 'dead-letters', 'drain', 'unit-path']) expect(help).toContain(`  ${command}`);
  });

  test('unit-path names the unit inside the package, and systemd-analyze verify finds nothing wrong with it', async (ctx) => {
    const unit = (await run(bin, ['unit-path'])).stdout.trim();
    expect(unit).toBe(join(installDir, 'node_modules/edgemail-relay-node/deploy/systemd/edgemail-relay.service'));
    const text = readFileSync(unit, 'utf8');
    for (const line of ['User=edgemail-relay', 'AmbientCapabilities=CAP_NET_BIND_SERVICE', 'ProtectSystem=strict', 'ReadWritePaths=/var/lib/edgemail-relay',
      'NoNewPrivileges=yes', 'Restart=always', 'Environment=SERVICE_RELAY_NODE_METRICS_ENABLED=true']) expect(text).toContain(`\n${line}\n`);
    expect(Number(/\nLimitNOFILE=(\d+)\n/.exec(text)?.[1])).toBeGreaterThanOrEqual(4 * (500 + 500));
    // Above the drain (10 s), the deliveries' stop (30 s) and the last report (10 s) together.
    expect(Number(/\nTimeoutStopSec=(\d+)\n/.exec(text)?.[1])).toBeGreaterThan(50);
    if (!HAS_SYSTEMD_ANALYZE) return ctx.skip();
    // Only ExecStart's path differs: where npm put the bin here, /usr/local/bin after `npm i -g`.
    const copy = join(work, 'edgemail-relay.service');
    writeFileSync(copy, text.replace('ExecStart=/usr/local/bin/edgemail-relay', `ExecStart=${bin}`));
    const verify = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8' });
    expect(verify.stderr + verify.stdout).toBe('');
    expect(verify.status).toBe(0);
  });
});

describe('enrol, receive, deliver, observe, drain: the packaged node against the real edge', () => {
  let node: RunningNode;

  test('enroll: the key from EDGEMAIL_RELAY_KEY; the node id on stdout; the credential 0600', async () => {
    const { stdout } = await run(bin, ['enroll', '--edge', stack.url, '--name', 'mx-package', '--state-dir', stateDir], { env: { ...nodeEnv(), EDGEMAIL_RELAY_KEY: key } });
    expect(stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);
    expect(statSync(join(stateDir, 'node.json')).mode & 0o777).toBe(0o600);
  });

  test('start: JSON log lines on stdout; mail in through the MX port reaches the API; mail sent through the API is delivered over SMTP', async () => {
    node = await startNode();
    const lines = node.stdout().trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.find((l) => l.msg === 'relay node started')).toMatchObject({ level: 'info', inbound: `127.0.0.1:${ports.inbound}`, metrics: `127.0.0.1:${ports.metrics}` });

    const plain = await sendMessage({ port: ports.inbound, from: 'ann@sender.example', to: `support@${DOMAIN}`, message: mail('pkg-in-1') });
    expect(plain.response).toMatch(/^250 /);
    const tls = await sendMessage({ port: ports.inbound, tls: 'starttls', from: 'ann@sender.example', to: `support@${DOMAIN}`, message: mail('pkg-in-2') });
    expect(tls.response).toMatch(/^250 /);
    const refused = await sendMessage({ port: ports.inbound, from: 'ann@sender.example', to: 'someone@not-registered.test', message: mail('nobody') });
    expect(refused.error?.response).toMatch(/^550 /);
    await eventually(inboundSubjects, (s) => s.includes('pkg-in-1') && s.includes('pkg-in-2'), 20_000);

    const sent = await stack.call('POST', '/api/v1/emails/send', { token: sender, body: { from: `news@${DOMAIN}`, to: 'bob@example.org', subject: 'pkg-out-1', text: 'Out through the package.' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const arrived = await eventually(async () => receiver.arrivals.filter((a) => a.bytes.includes('Subject: pkg-out-1')), (a) => a.length === 1, 20_000);
    expect(arrived[0]!.rcpt).toBe('bob@example.org');
    expect(arrived[0]!.bytes).toMatch(/^DKIM-Signature: /m);
    const id = sent.body.emails[0].id;
    await eventually(async () => (await stack.call('GET', `/api/v1/emails/${id}`, { token: reader })).body.email?.status, (s) => s === 'sent', 20_000);
  });

  test('/readyz, /healthz and /metrics on loopback; the scrape counts what happened and names no address, domain or subject', async () => {
    expect(await metricsGet('/healthz')).toEqual({ status: 200, body: '{"status":"alive"}\n' });
    expect((await metricsGet('/readyz')).status).toBe(200);
    // Prometheus scrapes by address; a name that is not an address could be rebound to 127.0.0.1 by a web page.
    for (const host of ['attacker.example', `attacker.example:${ports.metrics}`, '127.0.0.1.nip.io']) {
      const refused = await metricsGet('/metrics', host);
      expect(refused.status).toBe(403);
      expect(refused.body).not.toContain('edgemail_relay_');
    }
    expect((await metricsGet('/metrics', `localhost:${ports.metrics}`)).status).toBe(200);

    const scrape = (await metricsGet('/metrics')).body;
    expect(sample(scrape, 'edgemail_relay_smtp_messages_total{listener="inbound",result="accepted",class="2xx"}')).toBe(2);
    expect(sample(scrape, 'edgemail_relay_smtp_recipients_total{listener="inbound",class="5xx"}')).toBe(1);
    expect(sample(scrape, 'edgemail_relay_smtp_sessions_total{listener="inbound"}')).toBe(3);
    expect(sample(scrape, 'edgemail_relay_tls_handshakes_total{listener="inbound",certificate="self_signed"}')
      + sample(scrape, 'edgemail_relay_tls_handshakes_total{listener="inbound",certificate="stand_in"}')).toBe(1);
    expect(scrape).toMatch(/^edgemail_relay_tls_certificate_expiry_seconds\{listener="inbound",certificate="\w+"\} \d/m);
    expect(sample(scrape, 'edgemail_relay_forwarded_messages_total')).toBe(2);
    expect(sample(scrape, 'edgemail_relay_spool_messages')).toBe(0);
    expect(sample(scrape, 'edgemail_relay_edge_up')).toBe(1);
    expect(sample(scrape, `edgemail_relay_info{version="${VERSION}"}`)).toBe(1);
    expect(sample(scrape, 'edgemail_relay_outbound_jobs_total{event="claimed"}')).toBe(1);
    expect(sample(scrape, 'edgemail_relay_outbound_jobs_total{event="sent"}')).toBe(1);
    expect(sample(scrape, 'edgemail_relay_outbound_delivery_seconds_count{outcome="sent"}')).toBe(1);
    expect(sample(scrape, 'edgemail_relay_outbound_connections')).toBeGreaterThanOrEqual(0);
    expect(sample(scrape, 'edgemail_relay_process_resident_memory_bytes')).toBeGreaterThan(10_000_000);
    expect(scrape).toContain('edgemail_relay_process_cpu_seconds_total ');
    expect(scrape).toContain('edgemail_relay_dead_letters 0');
    // Label values are fixed words: nothing a sender or a tenant wrote.
    for (const tenantData of [DOMAIN, 'sender.example', 'example.org', 'not-registered', 'ann', 'bob', 'support', 'pkg-in', 'pkg-out', 'relay-package', 'mx-package']) {
      expect(scrape, tenantData).not.toContain(tenantData);
    }
    const status = (await run(bin, ['status', '--state-dir', stateDir], { env: nodeEnv() })).stdout;
    expect(status).toContain('node:         mx-package (');
    expect(status).toContain('process:      running, ready');
    expect(status).not.toMatch(/myr_/);
  });

  test('SIGTERM mid-message and mid-delivery: the listener stops accepting, the message being sent is answered 250, an idle session gets 421, the delivery under way ends and is reported, the node exits 0, nothing is lost', async () => {
    // A delivery the receiving MX is slow to answer, under way when the signal comes.
    receiver.holdMs = 2000;
    const out = await stack.call('POST', '/api/v1/emails/send', { token: sender, body: { from: `news@${DOMAIN}`, to: 'carol@example.org', subject: 'pkg-out-drain', text: 'Delivered while the node stops.' } });
    expect(out.status, JSON.stringify(out.body)).toBe(201);
    await eventually(async () => receiver.held, (n) => n === 1, 20_000);
    const busy = await openRaw(ports.inbound);
    expect(await busy.reply()).toMatch(/^220 /);
    await toDataPrompt(busy, { from: 'ann@sender.example', to: `support@${DOMAIN}` });
    busy.write(`${mail('pkg-drain-1').split('\r\n\r\n')[0]}\r\n\r\nThe first half, `);
    const idle = await openRaw(ports.inbound);
    expect(await idle.reply()).toMatch(/^220 /);
    expect(await idle.command('EHLO idle.example')).toMatch(/^250/);

    node.child.kill('SIGTERM');
    // No new session once the signal is in.
    await eventually(() => new Promise<boolean>((resolve) => {
      const socket = connect(ports.inbound, '127.0.0.1');
      socket.once('connect', () => { socket.destroy(); resolve(false); });
      socket.once('error', () => resolve(true));
    }), (refused) => refused, 5000);
    expect((await metricsGet('/readyz')).status).toBe(503);
    // The message in progress ends within the grace and is answered as usual.
    busy.write('and the rest.\r\n.\r\n');
    expect(await busy.reply()).toMatch(/^250 /);
    expect(await busy.command('QUIT')).toMatch(/^221 /);
    // The idle one is told to come back when the grace (3 s here) is over.
    expect(await idle.reply(10_000)).toMatch(/^421 4\.3\.2 /);
    expect(await node.exited).toBe(0);
    expect(node.stdout()).toContain('"msg":"relay node stopped"');
    receiver.holdMs = 0;
    // The delivery finished inside the stop and its result reached the edge: sent once, not handed out again.
    expect(receiver.arrivals.filter((a) => a.bytes.includes('Subject: pkg-out-drain'))).toHaveLength(1);
    expect((await stack.call('GET', `/api/v1/emails/${out.body.emails[0].id}`, { token: reader })).body.email.status).toBe('sent');

    // Forwarded before the exit, or kept in the spool for the next start: either way it reaches the edge once.
    const left = readdirSync(join(stateDir, 'spool')).filter((n) => n.endsWith('.eml')).length;
    node = await startNode();
    const subjects = await eventually(inboundSubjects, (s) => s.includes('pkg-drain-1'), 20_000);
    expect(subjects.filter((s) => s === 'pkg-drain-1')).toHaveLength(1);
    expect(left).toBeLessThanOrEqual(1);
    node.child.kill('SIGTERM');
    expect(await node.exited).toBe(0);
  });

  test('drain: with the node stopped, forwards what the spool holds and exits 0 once it is empty; refuses while a node runs there', async () => {
    // A node that cannot reach the edge (its node.json pointed at a closed port) takes mail into its spool and says it is not ready.
    const stateFile = join(stateDir, 'node.json');
    const enrolled = readFileSync(stateFile, 'utf8');
    writeFileSync(stateFile, enrolled.replace(JSON.stringify(stack.url), JSON.stringify('http://127.0.0.1:9')));
    node = await startNode({ SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false', SERVICE_SUBMISSION_TLS_ENABLED: 'false' });
    const readyz = await metricsGet('/readyz');
    expect(readyz).toEqual({ status: 503, body: '{"status":"not ready","reason":"the edge has not answered this node yet"}\n' });
    const sent = await sendMessage({ port: ports.inbound, from: 'ann@sender.example', to: `support@${DOMAIN}`, message: mail('pkg-drained-1') });
    expect(sent.response).toMatch(/^250 /);
    const scrape = (await metricsGet('/metrics')).body;
    expect(sample(scrape, 'edgemail_relay_spool_messages')).toBe(1);
    expect(sample(scrape, 'edgemail_relay_spool_bytes')).toBeGreaterThanOrEqual(mail('pkg-drained-1').length);
    expect(sample(scrape, 'edgemail_relay_edge_up')).toBe(0);
    expect(sample(scrape, 'edgemail_relay_edge_requests_total{outcome="unreachable"}')).toBeGreaterThan(0);

    const refused = await run(bin, ['drain', '--state-dir', stateDir], { env: nodeEnv() }).then(() => null, (e: { code: number; stderr: string }) => e);
    expect(refused?.code).toBe(1);
    expect(refused?.stderr).toContain(`cannot drain: process ${node.child.pid} is running a relay node on ${stateDir}`);
    // Nor does a second node start on it (both would forward the same spool).
    const second = await run(bin, ['start', '--state-dir', stateDir, '--port', '0', '--submission-port', 'off', '--host', '127.0.0.1'], { env: nodeEnv() })
      .then(() => null, (e: { code: number; stderr: string }) => e);
    expect(second?.code).toBe(1);
    expect(second?.stderr).toContain(`cannot start: process ${node.child.pid} is running a relay node on ${stateDir}`);
    node.child.kill('SIGTERM');
    expect(await node.exited).toBe(0);
    expect(readdirSync(join(stateDir, 'spool')).filter((n) => n.endsWith('.eml'))).toHaveLength(1);

    writeFileSync(stateFile, enrolled);
    const drained = await run(bin, ['drain', '--state-dir', stateDir, '--timeout', '30'], { env: nodeEnv() });
    expect(drained.stdout).toContain('"msg":"spool drained: every message was acknowledged by the edge"');
    expect(readdirSync(join(stateDir, 'spool')).filter((n) => n.endsWith('.eml'))).toEqual([]);
    expect((await inboundSubjects()).filter((s) => s === 'pkg-drained-1')).toHaveLength(1);
  });
});
