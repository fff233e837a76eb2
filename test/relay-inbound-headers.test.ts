// An inbound message through a real relay node and the real edge, read back
// as a user reads it (issue 14): a header that occurs more than once keeps
// every value, in order, in the record's `headers` (items 6); and the node
// logs one line per receipt at its default level, with the ids the API knows
// (item 5).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { repoRoot } from '../edge/local/edge-worker.js';
import { enrollNode, readNodeState, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { registerProvenDomain } from './support/domain-ownership.js';
import { inboundRecords, startTestNode } from './support/relay-node.js';
import { forward, inboundMeta } from './support/relay.js';
import { freePort } from './support/global-setup.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const DOMAIN = 'headers-relay.test';

let stack: TestStack;
let key: string;
let nodeToken: string;
let dns: TestDnsServer;
let node: RelayNode;
let stateDir: string;
const logs: LogLine[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'headers');
  ({ token: key } = await tenant.key(['relay:write', 'domains:write', 'inbound:read']));
  await registerProvenDomain(stack, key, DOMAIN);
  dns = await startDnsServer();
  stateDir = mkdtempSync(join(tmpdir(), 'relay-headers-'));
  await enrollNode({ edgeUrl: stack.url, key, name: 'mx-headers', stateDir });
  nodeToken = (await readNodeState(stateDir)).token;
  node = await startTestNode({ stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), outbound: false });
});
afterAll(async () => {
  await node?.stop();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** A message that already crossed two hops, tagged twice. */
const mail = (subject: string) => [
  'Received: from relay2.sender.example by relay3.sender.example; Thu, 26 Nov 2026 02:00:02 +0000',
  'Received: from client.sender.example by relay2.sender.example; Thu, 26 Nov 2026 02:00:01 +0000',
  'From: Ann <ann@sender.example>',
  `To: <support@${DOMAIN}>`,
  `Subject: ${subject}`,
  `Message-ID: <${subject}@sender.example>`,
  'X-Tag: first',
  'X-Tag: =?UTF-8?Q?zw=C3=A9i?=',
  '',
  `Hello from ${subject}.`,
  '',
].join('\r\n');

const recordWithSubject = (subject: string) =>
  eventually(() => inboundRecords(stack, key), (list) => list.some((r) => r.subject === subject), 20_000)
    .then((list) => list.find((r) => r.subject === subject));

describe('repeated headers in the inbound record', () => {
  test('two Received and two X-Tag sent over SMTP come back from GET /api/v1/inbound-emails/{id} with every value in order', async () => {
    const sent = await sendMessage({ port: node.port, from: 'ann@sender.example', to: `support@${DOMAIN}`, message: mail('repeated') });
    expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    const listed = await recordWithSubject('repeated');
    const got = await stack.call('GET', `/api/v1/inbound-emails/${listed.id}`, { token: key });
    expect(got.status).toBe(200);
    const { headers } = got.body.inbound_email;
    // The node's own Received goes on top (this hop), then the sender's two, as they came.
    expect(headers.received).toHaveLength(3);
    expect(headers.received[0]).toMatch(/^from .*\sby mx\.relay-test\.test with ESMTP /);
    expect(headers.received.slice(1)).toEqual([
      'from relay2.sender.example by relay3.sender.example; Thu, 26 Nov 2026 02:00:02 +0000',
      'from client.sender.example by relay2.sender.example; Thu, 26 Nov 2026 02:00:01 +0000',
    ]);
    // Decoded like every value (RFC 2047), in the message's order.
    expect(headers['x-tag']).toEqual(['first', 'zwéi']);
    // A header that occurs once is still a plain string, as the spec's "string to string".
    expect(headers.subject).toBe('repeated');
    expect(headers.from).toBe('Ann <ann@sender.example>');
    // The list gives the same record.
    expect(listed.headers).toEqual(headers);
  });

  test('the OpenAPI description says a value is a string or an array of strings', async () => {
    const spec = await stack.call('GET', '/api/v1/openapi.json', { token: key });
    expect(spec.status).toBe(200);
    const schema = spec.body.components.schemas.InboundEmail.properties.headers;
    expect(schema.additionalProperties.anyOf).toEqual([{ type: 'string' }, { type: 'array', items: { type: 'string' } }]);
    expect(schema.description).toMatch(/array of strings in the message's order/);
  });

  test('a forward whose repeated_headers lists a single value, or a value that is not a string, is 400 naming the field, and nothing is stored', async () => {
    const to = [`support@${DOMAIN}`];
    const before = (await inboundRecords(stack, key)).length;
    const single = await forward(stack, nodeToken, { meta: inboundMeta(to, { parsed: { ...inboundMeta(to).parsed, repeated_headers: { 'x-tag': ['only'] } } }), raw: 'Subject: x\r\n\r\nx\r\n' });
    expect(single.status).toBe(400);
    expect(single.body.error).toMatch(/^invalid meta: meta\.parsed\.repeated_headers\.x-tag: must list every value of a header that occurs more than once/);
    const notText = await forward(stack, nodeToken, { meta: inboundMeta(to, { parsed: { ...inboundMeta(to).parsed, repeated_headers: { received: ['a', { b: 1 }] } } }), raw: 'Subject: x\r\n\r\nx\r\n' });
    expect(notText.status).toBe(400);
    expect(notText.body.error).toMatch(/^invalid meta: meta\.parsed\.repeated_headers\.received\.1: /);
    expect(await inboundRecords(stack, key)).toHaveLength(before);
  });

  test('a node older than the edge (no repeated_headers) still lands, with each header\'s first value', async () => {
    const to = [`support@${DOMAIN}`];
    const meta = inboundMeta(to, { parsed: { ...inboundMeta(to).parsed, subject: 'older node', headers: { received: 'from a by b', subject: 'older node' } } });
    const r = await forward(stack, nodeToken, { meta, raw: 'Received: from a by b\r\nReceived: from c by a\r\nSubject: older node\r\n\r\nx\r\n' });
    expect(r.status).toBe(200);
    const record = await recordWithSubject('older node');
    expect(record.headers).toEqual({ received: 'from a by b', subject: 'older node' });
  });
});

describe('the node\'s log at its default level', () => {
  test('one receipt is one info line, with the record\'s id as the API shows it; the steps are debug lines', async () => {
    logs.length = 0;
    const sent = await sendMessage({ port: node.port, from: 'ann@sender.example', to: `support@${DOMAIN}`, message: mail('one-line') });
    expect(sent.response).toMatch(/^250 /);
    const record = await recordWithSubject('one-line');
    await eventually(async () => logs.filter((l) => l.message === 'inbound message forwarded'), (l) => l.length > 0, 10_000);
    const shown = logs.filter((l) => l.level !== 'debug');
    expect(shown).toHaveLength(1);
    expect(shown[0]).toMatchObject({
      level: 'info',
      message: 'inbound message forwarded',
      fields: {
        records: [{ id: record.id, project_id: record.project_id, status: 'received' }],
        duplicate: false, from: 'ann@sender.example', to: [`support@${DOMAIN}`], client: '127.0.0.1',
        auth: { spf: expect.any(String), dkim: expect.any(String), dmarc: expect.any(String), aligned: false },
      },
    });
    expect(shown[0]!.fields!.id).toMatch(/^[A-Za-z0-9._-]+$/);
    // What was an info line each before is there for --verbose.
    expect(logs.filter((l) => l.level === 'debug').map((l) => l.message)).toEqual(expect.arrayContaining(['inbound message spooled', 'inbound message accepted']));
  });

  test('`edgemail relay start --verbose` prints the steps as debug lines; without it a receipt is the one info line', async () => {
    const run = async (flags: string[], subject: string) => {
      const dir = mkdtempSync(join(tmpdir(), 'relay-verbose-'));
      await enrollNode({ edgeUrl: stack.url, key, name: `mx-${subject}`, stateDir: dir });
      const port = await freePort();
      // The operator binary, as in production; TLS off so start-up does not wait on the certificate.
      const child = spawn(process.execPath, ['--import', 'tsx', 'edge/cli/main.ts', 'relay', 'start', '--state-dir', dir, '--port', String(port), '--submission-port', '0', '--host', '127.0.0.1', ...flags], {
        cwd: repoRoot,
        env: { ...process.env, SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false', SERVICE_SERVER_PUBLIC_URL: stack.url, SERVICE_DNS_SERVERS: dns.address, SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '0' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      child.stdout.on('data', (d) => (stdout += d));
      const exited = new Promise((resolve) => child.on('exit', resolve));
      try {
        await eventually(async () => stdout, (o) => o.includes('relay node started'), 30_000);
        const sent = await sendMessage({ port, from: 'ann@sender.example', to: `support@${DOMAIN}`, message: mail(subject) });
        expect(sent.response).toMatch(/^250 /);
        const record = await recordWithSubject(subject);
        await eventually(async () => stdout, (o) => o.includes(record.id), 10_000);
        return { stdout, record };
      } finally {
        child.kill('SIGTERM');
        await exited;
        rmSync(dir, { recursive: true, force: true });
      }
    };
    const quiet = await run([], 'quiet-node');
    const mine = (stdout: string, id: string) => stdout.split('\n').filter((l) => / relay (debug|info) inbound message /.test(l) && (l.includes(id) || l.includes('"session"')));
    expect(mine(quiet.stdout, quiet.record.id)).toEqual([expect.stringMatching(new RegExp(` relay info inbound message forwarded .*"records":\\[\\{"id":"${quiet.record.id}"`))]);
    const verbose = await run(['--verbose'], 'verbose-node');
    const lines = mine(verbose.stdout, verbose.record.id);
    expect(lines.map((l) => / relay (\w+ inbound message \w+)/.exec(l)![1])).toEqual(['debug inbound message spooled', 'debug inbound message accepted', 'info inbound message forwarded']);
  });
});
