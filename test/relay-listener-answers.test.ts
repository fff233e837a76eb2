// What a relay node's listeners answer and log one step off the happy path
// (issue 26): AUTH for each answer of the edge to the credential check (item
// 2: any 4xx but 408/429 is a refusal of the credential, `535 5.7.8`, counted
// and never "try again"; only an edge that is unreachable or answers
// 5xx/408/429 is `454 4.7.0`); one log line per refused sender or recipient,
// and TLS handshake failures naming the client and the listener (item 6). A
// real node against the real edge, through an HTTP front (as a reverse proxy
// or WAF would stand) that is told to answer the credential check itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { openRaw, type RawSmtp } from '../relay-node/test-support/smtp-raw.js';
import { enroll, makeInstallationWide } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

let stack: TestStack;
let dns: TestDnsServer;
let node: RelayNode;
let stateDir: string;
let front: Server;
let sender: string;
const logs: LogLine[] = [];
/** What the front answers to `POST /relay/v1/submission/auth` instead of the edge; null passes it on. */
let authAnswer: { status: number; body: unknown } | null = null;

/** Passes every request to the real edge, but the credential check when `authAnswer` says otherwise. */
function startFront(edgeUrl: string): Promise<string> {
  const edge = new URL(edgeUrl);
  front = createServer((req, res) => {
    if (authAnswer && req.url === '/relay/v1/submission/auth') {
      req.resume();
      res.writeHead(authAnswer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(authAnswer.body));
      return;
    }
    const out = httpRequest({ host: edge.hostname, port: edge.port, method: req.method, path: req.url, headers: { ...req.headers, host: edge.host } }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    req.pipe(out);
  });
  return new Promise((resolve) => front.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(front.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000' } });
  dns = await startDnsServer();
  const admin = await platformToken(stack);
  const acme = await seedProject(stack, admin, 'acme');
  sender = (await acme.key(['emails:write'])).token;
  const enrolled = await enroll(stack, (await acme.key(['relay:write'])).token);
  await makeInstallationWide(stack, enrolled.id);
  const url = await startFront(stack.url);
  stateDir = mkdtempSync(join(tmpdir(), 'edgemail-submission-answers-'));
  await writeNodeState(stateDir, { edge_url: url, node_id: enrolled.id, name: 'submission-answers', token: enrolled.token, enrolled_at: new Date().toISOString() });
  node = await startTestNode({
    stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), submissionPort: 0, outbound: false,
    env: { SERVICE_SUBMISSION_RATE_PER_MINUTE: '0', SERVICE_SUBMISSION_MAX_AUTH_FAILURES: '100' },
  });
}, 120_000);

afterAll(async () => {
  await node?.stop();
  front?.closeAllConnections();
  front?.close();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** Polls `check` until it holds, or fails after `timeoutMs`. */
async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

const plain = (token: string) => Buffer.from(`\0apikey\0${token}`).toString('base64');

async function tlsSession(): Promise<RawSmtp> {
  const raw = await openRaw(node.submissionPort!);
  expect(await raw.reply()).toMatch(/^220 /);
  expect(await raw.command('EHLO client.test')).toMatch(/^250/);
  expect(await raw.command('STARTTLS')).toMatch(/^220 /);
  await raw.startTls();
  expect(await raw.command('EHLO client.test')).toMatch(/^250/);
  return raw;
}

test('the edge refusing the credential check with any 4xx (400 "token: Too small", 403, 413, 422) is 535 5.7.8, never 454', async () => {
  const raw = await tlsSession();
  for (const [status, error] of [[400, 'invalid request body: token: Too small'], [403, 'forbidden'], [413, 'request body too large'], [422, 'unprocessable']] as const) {
    authAnswer = { status, body: { error } };
    expect(await raw.command(`AUTH PLAIN ${plain(sender)}`), `edge answered ${status}`).toMatch(/^535 5\.7\.8 /);
  }
  // A password longer than any key, or none: refused without asking the edge.
  authAnswer = null;
  expect(await raw.command(`AUTH PLAIN ${plain('x'.repeat(201))}`)).toMatch(/^535 5\.7\.8 /);
  expect(await raw.command(`AUTH PLAIN ${plain('')}`)).toMatch(/^535 5\.7\.8 /);
  // The same session takes a good key once the edge answers.
  expect(await raw.command(`AUTH PLAIN ${plain(sender)}`)).toMatch(/^235 /);
  raw.close();
  expect(logs.filter((l) => l.message === 'submission AUTH refused').length).toBeGreaterThanOrEqual(6);
});

test('an edge answering 5xx, 408 or 429 to the credential check is 454 4.7.0 (try again), not counted as a failure', async () => {
  const raw = await tlsSession();
  for (const status of [500, 503, 408, 429]) {
    authAnswer = { status, body: { error: `answered ${status}` } };
    expect(await raw.command(`AUTH PLAIN ${plain(sender)}`), `edge answered ${status}`).toMatch(/^454 4\.7\.0 /);
  }
  authAnswer = null;
  expect(await raw.command(`AUTH PLAIN ${plain(sender)}`)).toMatch(/^235 /);
  raw.close();
});

test('a refused recipient or sender is one log line each, inbound and submission, naming the client, the address and the reply', async () => {
  const inbound = await openRaw(node.port);
  expect(await inbound.reply()).toMatch(/^220 /);
  expect(await inbound.command('EHLO client.test')).toMatch(/^250/);
  expect(await inbound.command('MAIL FROM:<someone@example.org>')).toMatch(/^250/);
  expect(await inbound.command('RCPT TO:<nobody@not-served.test>')).toMatch(/^550 5\.1\.1 /);
  expect(await inbound.command('RCPT TO:<also@not-served-either.test>')).toMatch(/^550 5\.1\.1 /);
  inbound.close();
  const refused = logs.filter((l) => l.message === 'inbound recipient refused');
  expect(refused.map((l) => l.fields)).toEqual([
    expect.objectContaining({ client: '127.0.0.1', to: 'nobody@not-served.test', reply: expect.stringMatching(/^550 5\.1\.1 <nobody@not-served\.test>: recipient domain not-served\.test is not served here/) }),
    expect.objectContaining({ client: '127.0.0.1', to: 'also@not-served-either.test', reply: expect.stringMatching(/^550 5\.1\.1 /) }),
  ]);
  expect(refused.every((l) => l.level === 'info' && typeof l.fields?.session === 'string')).toBe(true);

  const submission = await tlsSession();
  expect(await submission.command(`AUTH PLAIN ${plain(sender)}`)).toMatch(/^235 /);
  expect(await submission.command('MAIL FROM:<jörg@example.org>')).toMatch(/^553 5\.6\.7 /);
  expect(await submission.command('MAIL FROM:<news@example.org>')).toMatch(/^250 /);
  expect(await submission.command('RCPT TO:<jörg@example.org>')).toMatch(/^553 5\.6\.7 /);
  submission.close();
  expect(logs.filter((l) => l.message === 'submission sender refused').map((l) => l.fields))
    .toEqual([expect.objectContaining({ client: '127.0.0.1', from: 'jörg@example.org', reply: expect.stringMatching(/^553 5\.6\.7 /) })]);
  expect(logs.filter((l) => l.message === 'submission recipient refused').map((l) => l.fields))
    .toEqual([expect.objectContaining({ client: '127.0.0.1', to: 'jörg@example.org', reply: expect.stringMatching(/^553 5\.6\.7 /) })]);
});

/** STARTTLS on `port`, then bytes that are no TLS ClientHello; the client's own port. */
async function failHandshake(port: number): Promise<number> {
  const socket: Socket = connect(port, '127.0.0.1');
  const said: string[] = [];
  socket.on('data', (chunk: Buffer) => said.push(chunk.toString('latin1')));
  socket.on('error', () => undefined);
  const waitFor = (pattern: RegExp) => until(() => pattern.test(said.join('')), String(pattern));
  await waitFor(/^220 /m);
  socket.write('EHLO client.test\r\n');
  await waitFor(/^250 /m);
  socket.write('STARTTLS\r\n');
  await waitFor(/^220 .*\r\n(?:.*\r\n)*220 /);
  socket.write('this is not a TLS ClientHello at all\r\n\r\n');
  const clientPort = socket.localPort!;
  await new Promise((resolve) => socket.once('close', resolve));
  return clientPort;
}

test('a failed TLS handshake is a warning naming the listener, the client address and its port', async () => {
  for (const [listener, port] of [['inbound', node.port], ['submission', node.submissionPort!]] as const) {
    const clientPort = await failHandshake(port);
    const find = () => logs.find((l) => l.message === `${listener} TLS handshake failed` && l.fields?.client_port === clientPort);
    await until(() => find() !== undefined, `the ${listener} TLS warning`);
    const line = find()!;
    expect(line.level).toBe('warn');
    expect(line.fields).toMatchObject({ listener, client: '127.0.0.1', client_port: clientPort, port, error: expect.any(String) });
  }
});
