// Spam scoring with a real rspamd (docs/inbound.md, Spam scoring): a relay
// node asks rspamd for each message after DATA, in parallel with the spool
// write and the DKIM checks; the project's thresholds refuse at DATA or mark;
// the verdict is on the record (GET /api/v1/inbound-emails/{id}) and in
// `inbound.received`. rspamd stopped never costs a message. Skipped, with a
// warning, where the `rspamd` binary is not installed (`.ci/run` installs it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { registerProvenDomain } from './support/domain-ownership.js';
import { inboundRecords, startTestNode } from './support/relay-node.js';
import { enroll, inboundBody, inboundMeta } from './support/relay.js';
import { rspamdBinary, startRspamd, type RunningRspamd } from './support/rspamd.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

if (!rspamdBinary) console.warn('test/inbound-spam.test.ts skipped: the `rspamd` binary is not installed (apt-get install rspamd)');

const DOMAIN = 'acme-spam.test';
const TO = `support@${DOMAIN}`;
// rspamd's test pattern: it answers `reject` with the score of its own reject threshold (15).
const GTUBE = 'XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X';

let stack: TestStack;
let key: string;
let dns: TestDnsServer;
let rspamd: RunningRspamd;
let node: RelayNode;
let stateDir: string;
const logs: LogLine[] = [];

const message = (subject: string, body: string) =>
  `From: Ann <ann@sender.example>\r\nTo: <${TO}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@sender.example>\r\nDate: Sun, 29 Nov 2026 10:00:00 +0000\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n`;
const send = (subject: string, body: string) => sendMessage({ port: node.port, from: 'ann@sender.example', to: TO, message: message(subject, body) });
const recordBySubject = (subject: string) =>
  eventually(async () => (await inboundRecords(stack, key)).find((r) => r.subject === subject), (r) => r !== undefined, 20_000);
const eventData = async (id: string) => {
  const rows = await eventually(async () => (await stack.sql.query(`SELECT data FROM outbox WHERE event = 'inbound.received' AND data->>'id' = $1`, [id])).rows, (r) => r.length === 1);
  return rows[0].data as Record<string, any>;
};
const failureCount = async () => {
  const text = await (await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith('edgemail_relay_spam_check_failures_total{reason="unreachable"}'));
  return line ? Number(line.split(' ').at(-1)) : 0;
};

describe.skipIf(!rspamdBinary)('spam scoring with rspamd at a relay node', () => {
  beforeAll(async () => {
    [rspamd, stack, dns] = await Promise.all([startRspamd(), startTestStack(), startDnsServer({})]);
    const tenant = await seedProject(stack, await platformToken(stack), 'spam');
    ({ token: key } = await tenant.key(['relay:write', 'domains:write', 'inbound:read', 'inbound:write']));
    await registerProvenDomain(stack, key, DOMAIN);
    const put = await stack.call('PUT', '/api/v1/project/inbound-spam', { token: key, body: { reject_score: 10, mark_score: 5 } });
    expect(put.status).toBe(200);
    stateDir = mkdtempSync(join(tmpdir(), 'relay-spam-'));
    await enrollNode({ edgeUrl: stack.url, key, name: 'mx-spam', stateDir });
    node = await startTestNode({
      stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), outbound: false, metricsPort: 0,
      env: { SERVICE_RELAY_NODE_INBOUND_SPAM_RSPAMD_URL: rspamd.url, SERVICE_RELAY_NODE_INBOUND_SPAM_TIMEOUT: '2s', SERVICE_RELAY_NODE_METRICS_ENABLED: 'true' },
    });
  });
  afterAll(async () => {
    await node?.stop();
    await rspamd?.dispose();
    await dns?.close();
    await stack?.stop();
    if (stateDir) rmSync(stateDir, { recursive: true, force: true });
  });

  test('the thresholds: read back, and a mark above the reject threshold is refused with nothing changed', async () => {
    expect((await stack.call('GET', '/api/v1/project/inbound-spam', { token: key })).body).toEqual({ reject_score: 10, mark_score: 5 });
    const bad = await stack.call('PUT', '/api/v1/project/inbound-spam', { token: key, body: { reject_score: 10, mark_score: 11 } });
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toHaveProperty('mark_score');
    expect((await stack.call('PUT', '/api/v1/project/inbound-spam', { token: key, body: { reject_score: 'high', mark_score: null } })).status).toBe(400);
    expect((await stack.call('GET', '/api/v1/project/inbound-spam', { token: key })).body).toEqual({ reject_score: 10, mark_score: 5 });
  });

  test('GTUBE reaches the project\'s reject threshold: 550 5.7.1 at DATA; the record is kept, rejected, with its verdict', async () => {
    const sent = await send('gtube', `This is the GTUBE test message.\r\n${GTUBE}`);
    expect(sent.error?.responseCode).toBe(550);
    expect(sent.error?.response).toMatch(/^550 5\.7\.1 Message refused as spam: its spam score \(15\) reaches the limit set for its recipients/);

    const record = await recordBySubject('gtube');
    expect(record.status).toBe('rejected');
    expect(record.status_reason).toMatch(/^spam score 15 reached the project's reject threshold/);
    expect(record.spam).toEqual({ score: 15, required_score: 15, action: 'reject', symbols: ['GTUBE'], marked: true });
    expect((await eventData(record.id)).spam).toEqual(record.spam);
  });

  test('a clean message is stored with its score, action and symbols, on the record and in the event, unmarked', async () => {
    const sent = await send('lunch', 'Hi Bob, shall we have lunch on Friday at noon? Ann');
    expect(sent.response).toMatch(/^250 /);
    const record = await recordBySubject('lunch');
    expect(record.status).toBe('received');
    expect(record.spam).toMatchObject({ action: 'no action', required_score: 15, marked: false });
    expect(record.spam.score).toBeLessThan(5);
    expect(record.spam.symbols.length).toBeGreaterThan(0);
    expect(record.spam.symbols).toEqual(expect.arrayContaining(['MIME_GOOD']));
    expect((await eventData(record.id)).spam).toEqual(record.spam);
  });

  test('a score at the project\'s mark threshold marks the record and the event', async () => {
    expect((await stack.call('PUT', '/api/v1/project/inbound-spam', { token: key, body: { reject_score: 10, mark_score: -50 } })).status).toBe(200);
    const sent = await send('marked', 'Hi Bob, the minutes of Tuesday are below. Ann');
    expect(sent.response).toMatch(/^250 /);
    const record = await recordBySubject('marked');
    expect(record.spam.marked).toBe(true);
    expect((await eventData(record.id)).spam.marked).toBe(true);
  });

  test('a backlog forwarded in one batch (POST /relay/v1/inbound/batch) stores each message\'s verdict, refusal and mark', async () => {
    expect((await stack.call('PUT', '/api/v1/project/inbound-spam', { token: key, body: { reject_score: 10, mark_score: 5 } })).status).toBe(200);
    const forwarder = await enroll(stack, key);
    const message = (subject: string, spam: Record<string, unknown>, spamRejected: boolean) => ({
      meta: inboundMeta([TO], { spam, spam_rejected: spamRejected, parsed: { ...inboundMeta([]).parsed, subject } }),
      raw: `From: <ann@example.org>\r\nTo: <${TO}>\r\nSubject: ${subject}\r\n\r\nHello.\r\n`,
    });
    const singles = [
      message('batch-refused', { score: 12.5, required_score: 15, action: 'add header', symbols: ['A', 'B'] }, true),
      message('batch-clean', { score: 1, required_score: 15, action: 'no action', symbols: [] }, false),
    ].map((m) => inboundBody(m));
    const metaLengths = singles.map((s) => Number(s.headers['edgemail-meta-length']));
    const res = await fetch(`${stack.url}/relay/v1/inbound/batch`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${forwarder.token}`, 'content-type': 'application/vnd.edgemail.inbound-batch',
        'edgemail-meta-lengths': metaLengths.join(','), 'edgemail-message-lengths': singles.map((s, i) => s.body.byteLength - metaLengths[i]!).join(','),
      },
      body: new Uint8Array(Buffer.concat([...singles.map((s, i) => s.body.subarray(0, metaLengths[i])), ...singles.map((s, i) => s.body.subarray(metaLengths[i]))])),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { results: { status: number }[] }).results.map((r) => r.status)).toEqual([200, 200]);
    const refused = await recordBySubject('batch-refused');
    expect(refused).toMatchObject({ status: 'rejected', status_reason: expect.stringMatching(/^spam score 12.5 reached/) });
    expect(refused.spam).toEqual({ score: 12.5, required_score: 15, action: 'add header', symbols: ['A', 'B'], marked: true });
    const clean = await recordBySubject('batch-clean');
    expect(clean).toMatchObject({ status: 'received', spam: { score: 1, required_score: 15, action: 'no action', symbols: [], marked: false } });
    expect((await eventData(clean.id)).spam).toEqual(clean.spam);
  });

  test('rspamd stopped: mail is still accepted and stored unscored, each failure counted, the outage logged once', async () => {
    await rspamd.stop();
    const before = await failureCount();
    for (const subject of ['down-1', 'down-2']) expect((await send(subject, 'Still here.')).response).toMatch(/^250 /);
    for (const subject of ['down-1', 'down-2']) {
      const record = await recordBySubject(subject);
      expect(record.status).toBe('received');
      expect(record.spam).toBeNull();
      expect((await eventData(record.id)).spam).toBeNull();
    }
    expect(await failureCount()).toBe(before + 2);
    const outage = logs.filter((l) => l.message.startsWith('rspamd gives no verdicts'));
    expect(outage).toHaveLength(1);
    expect(outage[0]).toMatchObject({ level: 'warn', fields: { url: rspamd.url, reason: 'unreachable' } });
  });
});
