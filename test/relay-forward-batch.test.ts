// Several messages per forward (issue 16): `POST /relay/v1/inbound/batch` on
// the real edge stores every message a batch carries as the single route
// stores one, all records in one statement, answers one result per message
// (a refused one refused exactly as alone, the others stored), stores nothing
// twice when a batch is sent again after a lost answer, and counts each
// message in the node's inbound limit. A real relay node batches a backlog,
// dead-letters only the message the edge refuses, and falls back to single
// forwards against an edge that does not take the batch's body type.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, spoolDir, type RelayNode } from '../relay-node/src/index.js';
import type { SpooledMeta } from '../relay-node/src/inbound/spool-store/spooled-message.js';
import { openSpool } from '../relay-node/src/spool/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { enroll, forward, inboundBody, inboundMeta, registerDomain, type EnrolledNode, type Forwarded } from './support/relay.js';
import { inboundRecords, startTestNode } from './support/relay-node.js';
import { useTenantStack } from './support/tenant-stack.js';
import { awayFromWindowEdge, eventually } from './support/wait.js';

const INBOUND_LIMIT = 8;
const DOMAIN = 'acme-batch.test';
const env = useTenantStack({
  settings: { SERVICE_RATELIMIT_RELAY_NODE_INBOUND_PER_MINUTE: String(INBOUND_LIMIT) },
  keys: { relay: ['relay:write', 'inbound:read'] },
});
let dns: TestDnsServer;
const stateDirs: string[] = [];
const nodes: RelayNode[] = [];

beforeAll(async () => {
  await registerDomain(env.stack, env.tenant.project.id, DOMAIN);
  dns = await startDnsServer();
  // Which transaction inserted each row (as inbound-ingest.test.ts tells them apart).
  await env.stack.sql.query(`
    CREATE TABLE inserted_by (tbl text, row_id text, tx xid8);
    CREATE FUNCTION note_inserting_tx() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN INSERT INTO inserted_by VALUES (TG_TABLE_NAME, NEW.id::text, pg_current_xact_id()); RETURN NEW; END $$;
    CREATE TRIGGER note_tx AFTER INSERT ON inbound_emails FOR EACH ROW EXECUTE FUNCTION note_inserting_tx();
    CREATE TRIGGER note_tx AFTER INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION note_inserting_tx();`);
});
afterAll(async () => {
  for (const n of nodes) await n.stop();
  await dns?.close();
  for (const dir of stateDirs) rmSync(dir, { recursive: true, force: true });
});

const raw = (subject: string) => `From: <ann@example.org>\r\nTo: <support@${DOMAIN}>\r\nSubject: ${subject}\r\n\r\nHello.\r\n`;
const message = (subject: string, overrides: Record<string, unknown> = {}): Forwarded & { meta: Record<string, any> } => ({
  meta: inboundMeta([`support@${DOMAIN}`], { ...overrides, parsed: { ...inboundMeta([]).parsed, subject } }),
  raw: raw(subject),
});

/** The batch body a node sends: every meta, then every message's bytes, each piece's length in the headers. */
function batchBody(messages: Forwarded[]) {
  const singles = messages.map((m) => inboundBody(m));
  const metaLengths = singles.map((s) => Number(s.headers['edgemail-meta-length']));
  return {
    body: new Uint8Array(Buffer.concat([...singles.map((s, i) => s.body.subarray(0, metaLengths[i])), ...singles.map((s, i) => s.body.subarray(metaLengths[i]))])),
    headers: {
      'content-type': 'application/vnd.edgemail.inbound-batch',
      'edgemail-meta-lengths': metaLengths.join(','),
      'edgemail-message-lengths': singles.map((s, i) => s.body.byteLength - metaLengths[i]!).join(','),
    },
  };
}

async function forwardBatch(token: string, messages: Forwarded[]) {
  const { body, headers } = batchBody(messages);
  const res = await fetch(`${env.stack.url}/relay/v1/inbound/batch`, { method: 'POST', headers: { authorization: `Bearer ${token}`, ...headers }, body });
  return { status: res.status, body: await res.json() as any, headers: res.headers };
}

async function stored(spoolIds: string[]) {
  const { rows: records } = await env.stack.sql.query(`
    SELECT e.id, e.spool_id, e.subject, i.tx::text AS tx FROM inbound_emails e JOIN inserted_by i ON i.tbl = 'inbound_emails' AND i.row_id = e.id::text
    WHERE spool_id = ANY($1)`, [spoolIds]);
  const { rows: events } = await env.stack.sql.query(`
    SELECT o.id, o.data->>'id' AS record_id, i.tx::text AS tx FROM outbox o JOIN inserted_by i ON i.tbl = 'outbox' AND i.row_id = o.id::text
    WHERE event = 'inbound.received' AND data->>'id' = ANY($1)`, [records.map((r) => r.id)]);
  return { records, events };
}

describe('POST /relay/v1/inbound/batch', () => {
  let node: EnrolledNode;
  const good1 = message('batch one');
  const refused = message('batch refused', { rcpt_to: [] });
  const good2 = message('batch two');
  const ids = [good1, refused, good2].map((m) => m.meta.spool_id as string);
  let first: Awaited<ReturnType<typeof forwardBatch>>;

  beforeAll(async () => {
    node = await enroll(env.stack, env.keys.relay);
    first = await forwardBatch(node.token, [good1, refused, good2]);
  });

  test('a refused message is answered as the single route answers it; the others are stored, in one statement', async () => {
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const alone = await forward(env.stack, node.token, refused);
    expect(alone.status).toBe(400);
    const [one, bad, two] = first.body.results;
    expect(bad).toEqual({ status: 400, spool_id: null, error: alone.body.error, fields: alone.body.fields });
    expect(one).toMatchObject({ status: 200, spool_id: ids[0], duplicate: false, inbound_emails: [{ project_id: env.tenant.project.id, status: 'received' }] });
    expect(two).toMatchObject({ status: 200, spool_id: ids[2], duplicate: false, inbound_emails: [{ project_id: env.tenant.project.id, status: 'received' }] });

    const { records, events } = await stored(ids);
    expect(records.map((r) => r.subject).sort()).toEqual(['batch one', 'batch two']);
    expect(records.map((r) => r.id).sort()).toEqual([one.inbound_emails[0].id, two.inbound_emails[0].id].sort());
    // Every record and its outbox row, one transaction.
    expect(events).toHaveLength(2);
    expect(new Set([...records, ...events].map((r) => r.tx)).size).toBe(1);
    // The bytes are the message's own, as the single route stores them.
    const res = await fetch(`${env.stack.url}/api/v1/inbound-emails/${one.inbound_emails[0].id}/raw`, { headers: { authorization: `Bearer ${env.keys.relay}` } });
    expect(await res.text()).toBe(raw('batch one'));
  });

  test('sent again after a lost answer, it stores nothing twice and answers the same records', async () => {
    const again = await forwardBatch(node.token, [good1, refused, good2]);
    expect(again.status).toBe(200);
    const [one, bad, two] = again.body.results;
    expect(one).toEqual({ ...first.body.results[0], duplicate: true });
    expect(two).toEqual({ ...first.body.results[2], duplicate: true });
    expect(bad).toEqual(first.body.results[1]);
    const { records, events } = await stored(ids);
    expect(records).toHaveLength(2);
    expect(events).toHaveLength(2);
  });

  test('each message counts in the node\'s inbound limit: past it, the rest are 429 each, then the whole call', async () => {
    const counted = await enroll(env.stack, env.keys.relay);
    await awayFromWindowEdge();
    const five = Array.from({ length: 5 }, (_, i) => message(`limited ${i}`));
    const a = await forwardBatch(counted.token, five);
    expect(a.body.results.map((r: any) => r.status)).toEqual([200, 200, 200, 200, 200]);
    const more = Array.from({ length: 5 }, (_, i) => message(`limited more ${i}`));
    const b = await forwardBatch(counted.token, more);
    expect(b.status).toBe(200);
    // 8 per minute: 5 + 3 pass, the last two are refused as their own forwards would be.
    expect(b.body.results.map((r: any) => r.status)).toEqual([200, 200, 200, 429, 429]);
    expect(b.body.results[3]).toMatchObject({ spool_id: more[3]!.meta.spool_id, error: `rate limit exceeded: ${INBOUND_LIMIT} requests per minute` });
    expect(b.body.results[3].retry_after).toBeGreaterThanOrEqual(1);
    expect((await stored(more.map((m) => m.meta.spool_id))).records).toHaveLength(3);
    const single = await forward(env.stack, counted.token, message('limited alone'));
    expect(single.status).toBe(429);
  });

  test('the sender\'s suppression is judged per message, as the single route judges it (an expired entry no longer applies)', async () => {
    const own = await enroll(env.stack, env.keys.relay);
    await env.stack.sql.query(`INSERT INTO suppressions (project_id, address, reason) VALUES ($1, 'spam@example.org', 'manual')`, [env.tenant.project.id]);
    await env.stack.sql.query(`INSERT INTO suppressions (project_id, address, reason, expires_at) VALUES ($1, 'old@example.org', 'manual', now() - interval '1 hour')`, [env.tenant.project.id]);
    const answer = await forwardBatch(own.token, [
      message('from suppressed', { mail_from: 'Spam@Example.org' }),
      message('from expired', { mail_from: 'old@example.org' }),
      message('from anyone'),
    ]);
    expect(answer.body.results.map((r: any) => r.inbound_emails[0].status)).toEqual(['rejected', 'received', 'received']);
  });

  test('a message whose length disagrees with its meta is refused alone, its bytes skipped', async () => {
    const own = await enroll(env.stack, env.keys.relay);
    const a = message('framed a');
    const b = message('framed b');
    const { body, headers } = batchBody([a, b]);
    const lengths = headers['edgemail-message-lengths'].split(',').map(Number);
    // The first message announces one byte more, which the second message's bytes make up for.
    const metas = headers['edgemail-meta-lengths'].split(',').map(Number);
    const cut = metas[0]! + metas[1]! + lengths[0]!;
    const shifted = new Uint8Array(Buffer.concat([body.subarray(0, cut), Buffer.from('x'), body.subarray(cut)]));
    const res = await fetch(`${env.stack.url}/relay/v1/inbound/batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${own.token}`, ...headers, 'edgemail-message-lengths': `${lengths[0]! + 1},${lengths[1]}` },
      body: shifted,
    });
    const answer = await res.json() as any;
    expect(res.status, JSON.stringify(answer)).toBe(200);
    expect(answer.results[0]).toMatchObject({ status: 400, error: `invalid body: edgemail-message-lengths: message 0: must be ${lengths[0]} (raw ${lengths[0]} + the attachments' sizes), got ${lengths[0]! + 1}` });
    expect(answer.results[1]).toMatchObject({ status: 200, spool_id: b.meta.spool_id });
    expect((await stored([b.meta.spool_id])).records.map((r) => r.subject)).toEqual(['framed b']);
  });
});

/** Writes messages into a node's spool before it starts, as the listener would have. */
async function spoolMessages(stateDir: string, messages: { subject: string; to: string }[]): Promise<string[]> {
  const spool = await openSpool<SpooledMeta>(spoolDir(stateDir));
  const ids: string[] = [];
  for (const m of messages) {
    const { id } = await spool.write(Buffer.from(`From: <ann@sender.example>\r\nTo: <support@${DOMAIN}>\r\nSubject: ${m.subject}\r\n\r\nHello.\r\n`), {
      format: 1, listener: 'inbound', received_at: new Date().toISOString(), session_id: 's1',
      client_ip: '192.0.2.9', client_port: 40000, helo: 'client.test', mail_from: 'ann@sender.example', rcpt_to: [m.to],
      tls: null, auth: { spf: 'none', dkim: 'none', dmarc: 'none', aligned: false, client_ip: '192.0.2.9' },
      dmarc_policy: null, smtp_rejected: false, trace_headers: '',
    });
    ids.push(id);
  }
  await spool.close();
  return ids;
}

/** A node over a backlog, one forward at a time (so the backlog is one batch), its edge calls seen through `fetch`. */
async function nodeOverBacklog(name: string, messages: { subject: string; to: string }[], fetchVia: (url: string) => string) {
  const stateDir = mkdtempSync(join(tmpdir(), 'relay-batch-'));
  stateDirs.push(stateDir);
  await enrollNode({ edgeUrl: env.stack.url, key: env.keys.relay, name, stateDir });
  const ids = await spoolMessages(stateDir, messages);
  const calls: { path: string; headers: Headers; status: number }[] = [];
  const logs: LogLine[] = [];
  const seeing: typeof fetch = async (input, init) => {
    const url = fetchVia(String(input));
    const res = await fetch(url, init);
    if (String(input).includes('/relay/v1/inbound')) calls.push({ path: new URL(String(input)).pathname, headers: new Headers(init?.headers), status: res.status });
    return res;
  };
  const node = await startTestNode({
    stack: env.stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), outbound: false, fetch: seeing,
    forwarder: { backoff: { initialMs: 100, maxMs: 500 }, idlePollMs: 200, concurrency: 1 },
  });
  nodes.push(node);
  return { stateDir, ids, calls, logs };
}

const subjects = async () => (await inboundRecords(env.stack, env.keys.relay)).map((r) => r.subject);
const deadFiles = (stateDir: string) => {
  const dir = join(spoolDir(stateDir), 'dead');
  return existsSync(dir) ? readdirSync(dir).sort() : [];
};

describe('a relay node with a backlog', () => {
  test('forwards it in one batch; the message the edge refuses goes to dead/ alone, the others are stored', async () => {
    const { stateDir, ids, calls } = await nodeOverBacklog('mx-batch', [
      { subject: 'node one', to: `support@${DOMAIN}` },
      { subject: 'node refused', to: 'no-address-here' },
      { subject: 'node two', to: `support@${DOMAIN}` },
    ], (url) => url);
    const refusedId = ids[1]!;
    await eventually(async () => deadFiles(stateDir), (files) => files.length === 3, 15_000);
    expect(deadFiles(stateDir)).toEqual([`${refusedId}.eml`, `${refusedId}.json`, `${refusedId}.reason.txt`]);
    const names = await eventually(subjects, (s) => s.includes('node one') && s.includes('node two'), 15_000);
    expect(names).not.toContain('node refused');
    // One batch of all three, then only the refused message alone (its raw bytes, refused for good too).
    expect(calls[0]).toMatchObject({ path: '/relay/v1/inbound/batch', status: 200 });
    expect(calls[0]!.headers.get('edgemail-meta-lengths')!.split(',')).toHaveLength(3);
    expect(calls.slice(1).map((c) => `${c.path} ${c.status}`)).toEqual(['/relay/v1/inbound 400']);
    // The spool keeps nothing but dead/.
    expect(readdirSync(spoolDir(stateDir)).filter((f) => f !== 'dead' && !f.startsWith('.'))).toEqual([]);
  });

  test('against an edge that does not take the batch\'s body type (415), forwards one by one and stores every message', async () => {
    // The batch sent where only the single body type is taken: an edge older than batches answers it 415.
    const { stateDir, calls, logs } = await nodeOverBacklog('mx-older-edge', [
      { subject: 'older one', to: `support@${DOMAIN}` },
      { subject: 'older two', to: `support@${DOMAIN}` },
    ], (url) => url.replace('/relay/v1/inbound/batch', '/relay/v1/inbound'));
    await eventually(subjects, (s) => s.includes('older one') && s.includes('older two'), 15_000);
    // The edge commits before it answers: the last answer may reach the node just after the records show.
    await eventually(async () => calls.length, (n) => n >= 3);
    expect(calls.map((c) => `${c.path} ${c.status}`)).toEqual(['/relay/v1/inbound/batch 415', '/relay/v1/inbound 200', '/relay/v1/inbound 200']);
    expect(logs.some((l) => l.level === 'info' && l.message.startsWith('the edge takes no batched forwards'))).toBe(true);
    expect(deadFiles(stateDir)).toEqual([]);
  });
});
