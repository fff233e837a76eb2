// Scheduling and canceling (issue 17, "Scheduling"): `send_at` on the send
// and batch routes, stored on the message and shown in the email log, with
// the recipients not due before it; `POST /api/v1/emails/{id}/cancel` before
// a relay node claims the recipient. A real relay node (in this process)
// delivers to a real SMTP receiver on loopback whose MX the node's own DNS
// server names; claims are also made straight over /relay/v1 where a test
// needs a recipient held by a node.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { startReceiver, type Receiver } from '../relay-node/test-support/receiver.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { enroll, type EnrolledNode } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { useTenantStack } from './support/tenant-stack.js';
import { addedEvents, settledAuditEvents } from './support/audit.js';
import { eventually } from './support/wait.js';

const env = useTenantStack({
  // A short outbound.max_age: a scheduled send's age counts from its send_at (one test below).
  settings: { SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000', SERVICE_OUTBOUND_RETRY_DELAY: '1s', SERVICE_OUTBOUND_MAX_AGE: '3s' },
  keys: { sender: ['emails:write', 'emails:read'], manager: ['domains:write', 'relay:write'], reader: ['emails:read'] },
});

let dns: TestDnsServer;
let rx: Receiver;
let node: RelayNode;
let otherSender: string;
/** A node of the other project that is never started: its claims are made by hand. */
let handNode: EnrolledNode;
const dirs: string[] = [];
const logs: LogLine[] = [];

async function verifiedDomain(token: string, name: string): Promise<void> {
  const r = await env.stack.call('POST', '/api/v1/domains', { token, body: { name } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  await env.stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [r.body.domain.id]);
}

beforeAll(async () => {
  await verifiedDomain(env.keys.manager, 'acme.test');
  // grey@ is greylisted once (451), as many receivers do to a first attempt.
  let greylisted = false;
  rx = await startReceiver({
    host: '127.0.0.1',
    rcptReply: (to) => {
      if (to !== 'grey@dest.test' || greylisted) return null;
      greylisted = true;
      return { code: 451, text: '4.7.1 greylisted, come back later' };
    },
  });
  dns = await startDnsServer({
    'mx.dest.test': { A: ['127.0.0.1'] },
    'dest.test': { MX: [{ preference: 10, exchange: 'mx.dest.test' }] },
  });
  const enrolled = await enroll(env.stack, env.keys.manager, 'mx-schedule');
  const dir = mkdtempSync(join(tmpdir(), 'emails-schedule-'));
  dirs.push(dir);
  await writeNodeState(dir, { edge_url: env.stack.url, node_id: enrolled.id, name: 'mx-schedule', token: enrolled.token, enrolled_at: new Date().toISOString() });
  node = await startTestNode({
    stack: env.stack, stateDir: dir, dnsAddress: dns.address, log: collectingLog(logs), hostName: 'relay.acme.test',
    env: { SERVICE_OUTBOUND_MX_PORT: String(rx.port), SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true', SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false' },
    outbound: { idlePollMs: 200, timeouts: { connectionMs: 1000, greetingMs: 1000, socketMs: 3000 } },
  });

  const otherManager = (await env.other.key(['domains:write', 'relay:write'])).token;
  otherSender = (await env.other.key(['emails:write', 'emails:read'])).token;
  await verifiedDomain(otherManager, 'globex.test');
  handNode = await enroll(env.stack, otherManager, 'mx-by-hand');
});

afterAll(async () => {
  await node?.stop();
  await rx?.close();
  await dns?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const message = (extra: Record<string, unknown> = {}) => ({
  from: 'Acme <news@acme.test>', to: ['ann@dest.test'], subject: `Hello ${crypto.randomUUID().slice(0, 8)}`, text: 'Hello there.', ...extra,
});
const send = (body: unknown, token = env.keys.sender, headers: Record<string, string> = {}) =>
  env.stack.call('POST', '/api/v1/emails/send', { token, body, headers });
const cancel = (id: string, token = env.keys.sender) => env.stack.call('POST', `/api/v1/emails/${id}/cancel`, { token });
const logged = async (id: string, token = env.keys.reader) => (await env.stack.call('GET', `/api/v1/emails/${id}`, { token })).body.email;
const arrivedFor = (address: string) => rx.messages.filter((m) => m.rcptTo.includes(address));
const inSeconds = (s: number) => new Date(Date.now() + s * 1000).toISOString();

async function counts() {
  const { rows: [row] } = await env.stack.sql.query(`SELECT (SELECT count(*) FROM outbound_messages)::int AS messages, (SELECT count(*) FROM emails)::int AS emails`);
  return row as { messages: number; emails: number };
}

describe('send_at', () => {
  test('a send scheduled 4 s ahead is not delivered before send_at, and is delivered after it', async () => {
    const sendAt = inSeconds(4);
    const r = await send(message({ to: ['sched@dest.test'], send_at: sendAt }));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const [email] = r.body.emails;
    expect(email).toMatchObject({ status: 'queued', send_at: sendAt, attempts: 0 });

    const { rows: [stored] } = await env.stack.sql.query(
      'SELECT m.send_at, e.next_attempt_at FROM emails e JOIN outbound_messages m ON m.id = e.message_id WHERE e.id = $1', [email.id]);
    expect(stored.send_at.toISOString()).toBe(sendAt);
    expect(stored.next_attempt_at.toISOString()).toBe(sendAt);

    // The node claims every 200 ms meanwhile: a second before send_at, nothing was handed out
    // (read before the clock is checked, so what was read is from before send_at).
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(sendAt) - 1000 - Date.now())));
    const before = await logged(email.id);
    const arrivedBefore = arrivedFor('sched@dest.test').length;
    expect(Date.now()).toBeLessThan(Date.parse(sendAt));
    expect(before).toMatchObject({ status: 'queued', attempts: 0, send_at: sendAt, delivery_attempts: [] });
    expect(arrivedBefore).toBe(0);

    const sent = await eventually(() => logged(email.id), (e) => e?.status === 'sent', 15_000);
    expect(sent).toMatchObject({ attempts: 1, send_at: sendAt, delivery_attempts: [{ outcome: 'sent', smtp_code: 250 }] });
    expect(Date.parse(sent.delivery_attempts[0].started_at)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(Date.parse(sent.sent_at)).toBeGreaterThanOrEqual(Date.parse(sendAt));
    expect(arrivedFor('sched@dest.test')).toHaveLength(1);
    // The list shows it too.
    const listed = await env.stack.call('GET', '/api/v1/emails?recipient=sched@dest.test', { token: env.keys.reader });
    expect(listed.body.emails).toEqual([expect.objectContaining({ id: email.id, send_at: sendAt, status: 'sent' })]);
  });

  test('outbound.max_age counts from send_at: a send scheduled past max_age (3 s) and deferred once is retried, not expired', async () => {
    const sendAt = inSeconds(4);
    const r = await send(message({ to: ['grey@dest.test'], send_at: sendAt }));
    expect(r.status).toBe(201);
    const sent = await eventually(() => logged(r.body.emails[0].id), (e) => e?.status === 'sent' || e?.status === 'failed', 15_000);
    expect(sent.status, JSON.stringify(sent)).toBe('sent');
    expect(sent.delivery_attempts.map((a: any) => [a.outcome, a.smtp_code])).toEqual([['deferred', 451], ['sent', 250]]);
    // Created more than max_age before its first try: counted from created_at, it would have expired.
    expect(Date.parse(sent.delivery_attempts[0].started_at) - Date.parse(sent.created_at)).toBeGreaterThan(3000);
  });

  test('a send_at in the past (or now) is sent at once; one with an offset is stored as that instant', async () => {
    const past = await send(message({ to: ['past@dest.test'], send_at: '2020-01-01T00:00:00Z' }));
    expect(past.status, JSON.stringify(past.body)).toBe(201);
    expect(past.body.emails[0].send_at).toBe('2020-01-01T00:00:00.000Z');
    expect(await eventually(() => logged(past.body.emails[0].id), (e) => e?.status === 'sent', 15_000)).toMatchObject({ attempts: 1 });
    expect(arrivedFor('past@dest.test')).toHaveLength(1);

    // An hour from now, written as the wall clock of UTC+02:00.
    const inAnHour = Math.floor(Date.now() / 1000) * 1000 + 3_600_000;
    const offset = `${new Date(inAnHour + 2 * 3_600_000).toISOString().slice(0, 19)}+02:00`;
    const r = await send(message({ to: ['later@dest.test'], send_at: offset }));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.emails[0].send_at).toBe(new Date(inAnHour).toISOString());
    expect((await cancel(r.body.emails[0].id)).status).toBe(200);
  });

  test('without send_at the log says null, and the recipient is due at once', async () => {
    const r = await send(message({ to: ['now@dest.test'] }));
    expect(r.status).toBe(201);
    expect(r.body.emails[0].send_at).toBeNull();
    expect(await eventually(() => logged(r.body.emails[0].id), (e) => e?.status === 'sent', 15_000)).toMatchObject({ send_at: null });
  });

  test.each([
    ['more than 72 hours ahead', () => inSeconds(72 * 3600 + 120), 'must be at most 72 hours ahead'],
    ['not a date', () => 'tomorrow at nine', 'must be an RFC 3339 timestamp with a time zone (2026-11-27T09:00:00Z or 2026-11-27T10:00:00+01:00)'],
    ['an impossible date', () => '2026-02-30T09:00:00Z', 'must be an RFC 3339 timestamp with a time zone (2026-11-27T09:00:00Z or 2026-11-27T10:00:00+01:00)'],
    ['no time zone', () => inSeconds(60).slice(0, 19), 'must be an RFC 3339 timestamp with a time zone (2026-11-27T09:00:00Z or 2026-11-27T10:00:00+01:00)'],
  ])('send_at %s → 400 naming send_at; nothing written', async (_what, value, problem) => {
    const before = await counts();
    const r = await send(message({ send_at: value() }));
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: `invalid request body: send_at: ${problem}`, fields: { send_at: problem } });
    expect(await counts()).toEqual(before);
  });

  test('72 hours ahead, less a minute, is accepted', async () => {
    const r = await send(message({ to: ['far@dest.test'], send_at: inSeconds(72 * 3600 - 60) }));
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect((await cancel(r.body.emails[0].id)).status).toBe(200);
  });

  test('batch: each message has its own send_at; a bad one is 400 naming messages.<i>.send_at and nothing is written', async () => {
    const at = inSeconds(3600);
    const r = await env.stack.call('POST', '/api/v1/emails/batch', {
      token: env.keys.sender, body: { messages: [message({ to: ['b1@dest.test'], send_at: at }), message({ to: ['b2@dest.test'] })] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.messages.map((m: any) => m.emails[0].send_at)).toEqual([at, null]);
    expect((await cancel(r.body.messages[0].emails[0].id)).status).toBe(200);

    const before = await counts();
    const bad = await env.stack.call('POST', '/api/v1/emails/batch', {
      token: env.keys.sender, body: { messages: [message(), message({ send_at: inSeconds(80 * 3600) })] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toEqual({ 'messages.1.send_at': 'must be at most 72 hours ahead' });
    expect(await counts()).toEqual(before);
  });

  test('a sandbox key\'s scheduled send is captured at once, showing its send_at; nothing is due', async () => {
    const sandbox = (await env.tenant.key(['sandbox:write', 'emails:read'], { sandbox: true })).token;
    const sendAt = inSeconds(3600);
    const r = await send(message({ to: ['sandboxed@dest.test'], send_at: sendAt }), sandbox);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.emails[0]).toMatchObject({ status: 'captured', sandbox: true, send_at: sendAt });
    const { rows: [row] } = await env.stack.sql.query('SELECT next_attempt_at FROM emails WHERE id = $1', [r.body.emails[0].id]);
    expect(row.next_attempt_at).toBeNull();
    const answer = await cancel(r.body.emails[0].id);
    expect(answer.status).toBe(409);
    expect(answer.body.error).toMatch(/^email cannot be canceled: it is captured /);
  });

  test('the plan limits count a scheduled send when it is accepted', async () => {
    const usage = async () => (await env.stack.call('GET', '/api/v1/usage', { token: env.keys.reader })).body.usage.hour.used;
    const before = await usage();
    const r = await send(message({ to: ['count1@dest.test', 'count2@dest.test'], send_at: inSeconds(3600) }));
    expect(r.status).toBe(201);
    expect(await usage()).toBe(before + 2);
    for (const e of r.body.emails) expect((await cancel(e.id)).status).toBe(200);
    // A canceled recipient was accepted: it still counts.
    expect(await usage()).toBe(before + 2);
  });

  test('Idempotency-Key: the same scheduled body answers the first answer again, send_at included', async () => {
    const body = message({ to: ['idem@dest.test'], send_at: inSeconds(3600) });
    const first = await send(body, env.keys.sender, { 'Idempotency-Key': 'sched-1' });
    expect(first.status).toBe(201);
    const again = await send(body, env.keys.sender, { 'Idempotency-Key': 'sched-1' });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await cancel(first.body.emails[0].id)).status).toBe(200);
  });
});

describe('POST /api/v1/emails/{id}/cancel', () => {
  test('a scheduled recipient canceled before send_at is canceled and never delivered; its sibling is', async () => {
    const sendAt = inSeconds(3);
    const r = await send(message({ to: ['keep@dest.test', 'drop@dest.test'], send_at: sendAt }));
    expect(r.status).toBe(201);
    const [keep, drop] = r.body.emails;

    const canceled = await cancel(drop.id);
    expect(canceled.status, JSON.stringify(canceled.body)).toBe(200);
    expect(Object.keys(canceled.body)).toEqual(['email']);
    expect(canceled.body.email).toEqual({ ...drop, status: 'canceled' });
    expect(await logged(drop.id)).toMatchObject({ status: 'canceled', attempts: 0 });

    // Once the sibling has gone out, well past send_at, the canceled one is still canceled, never tried.
    await eventually(() => logged(keep.id), (e) => e?.status === 'sent', 15_000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await logged(drop.id)).toMatchObject({ status: 'canceled', attempts: 0, delivery_attempts: [], node_id: null });
    expect(arrivedFor('keep@dest.test')).toHaveLength(1);
    expect(arrivedFor('drop@dest.test')).toHaveLength(0);
    const { rows: [row] } = await env.stack.sql.query('SELECT status::text, next_attempt_at, lease_node_id FROM emails WHERE id = $1', [drop.id]);
    expect(row).toEqual({ status: 'canceled', next_attempt_at: null, lease_node_id: null });

    // The log filters by the new status.
    const listed = await env.stack.call('GET', '/api/v1/emails?status=canceled&recipient=drop@dest.test', { token: env.keys.reader });
    expect(listed.body.emails.map((e: any) => e.id)).toEqual([drop.id]);

    // Canceling again: 409 naming the status.
    const twice = await cancel(drop.id);
    expect(twice.status).toBe(409);
    expect(twice.body).toEqual({ error: 'email cannot be canceled: it is canceled (only a queued email can be, before a relay node claims it)' });
  });

  test('after delivery → 409 naming its status; nothing changes', async () => {
    const r = await send(message({ to: ['done@dest.test'] }));
    const id = r.body.emails[0].id;
    const sent = await eventually(() => logged(id), (e) => e?.status === 'sent', 15_000);
    const answer = await cancel(id);
    expect(answer.status).toBe(409);
    expect(answer.body).toEqual({ error: 'email cannot be canceled: it is sent (only a queued email can be, before a relay node claims it)' });
    expect(await logged(id)).toEqual(sent);
  });

  test('a suppressed recipient → 409 naming its status', async () => {
    await env.stack.sql.query(`INSERT INTO suppressions (project_id, address, reason) VALUES ($1, 'blocked@dest.test', 'manual')`, [env.tenant.project.id]);
    const r = await send(message({ to: ['blocked@dest.test'], send_at: inSeconds(3600) }));
    expect(r.body.emails[0].status).toBe('suppressed');
    const answer = await cancel(r.body.emails[0].id);
    expect(answer.status).toBe(409);
    expect(answer.body.error).toBe('email cannot be canceled: it is suppressed (only a queued email can be, before a relay node claims it)');
  });

  test('another project\'s id, or an unknown one → 404; the row is untouched', async () => {
    const theirs = await send(message({ from: 'news@globex.test', to: ['x@dest.test'], send_at: inSeconds(3600) }), otherSender);
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(201);
    const answer = await cancel(theirs.body.emails[0].id);
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ error: 'email not found' });
    expect((await logged(theirs.body.emails[0].id, otherSender)).status).toBe('queued');
    expect((await cancel(crypto.randomUUID())).status).toBe(404);
    expect((await cancel('not-a-uuid')).status).toBe(400);
    expect((await cancel(theirs.body.emails[0].id, otherSender)).status).toBe(200);
  });

  test('a recipient a relay node has claimed (sending) → 409 naming it; the lease is the node\'s', async () => {
    const r = await send(message({ from: 'news@globex.test', to: ['claimed@dest.test'] }), otherSender);
    const id = r.body.emails[0].id;
    const claim = await env.stack.call('POST', '/relay/v1/outbound/claim', { token: handNode.token, body: { max: 10 } });
    expect(claim.status, JSON.stringify(claim.body)).toBe(200);
    expect(claim.body.jobs.map((j: any) => j.email_id)).toEqual([id]);
    const answer = await cancel(id, otherSender);
    expect(answer.status).toBe(409);
    expect(answer.body.error).toBe('email cannot be canceled: it is sending (only a queued email can be, before a relay node claims it)');
    const { rows: [row] } = await env.stack.sql.query('SELECT status::text, lease_node_id FROM emails WHERE id = $1', [id]);
    expect(row).toEqual({ status: 'sending', lease_node_id: handNode.id });
  });

  test('cancels racing a claim: every recipient is either canceled or handed out, never both, never neither', async () => {
    const to = Array.from({ length: 30 }, (_, i) => `race${i}@dest.test`);
    const r = await send(message({ from: 'news@globex.test', to }), otherSender);
    expect(r.status).toBe(201);
    const ids: string[] = r.body.emails.map((e: any) => e.id);
    const [claim, ...answers] = await Promise.all([
      env.stack.call('POST', '/relay/v1/outbound/claim', { token: handNode.token, body: { max: 100 } }),
      ...ids.map((id) => cancel(id, otherSender)),
    ]);
    expect(claim.status).toBe(200);
    const claimed = new Set<string>(claim.body.jobs.map((j: any) => j.email_id));
    const canceled = new Set(ids.filter((_, i) => answers[i]!.status === 200));
    for (const [i, answer] of answers.entries()) {
      if (answer.status === 409) expect(answer.body.error).toMatch(/^email cannot be canceled: it is sending /);
      else expect(answer.status).toBe(200);
      // Exactly one of the two got each recipient.
      expect(claimed.has(ids[i]!) !== canceled.has(ids[i]!), ids[i]).toBe(true);
    }
    const { rows } = await env.stack.sql.query('SELECT id, status::text FROM emails WHERE id = any($1::uuid[])', [ids]);
    for (const row of rows) expect(row.status).toBe(claimed.has(row.id) ? 'sending' : 'canceled');
  });

  test('a cancel is project activity (`email.cancel`); a refused one is not recorded', async () => {
    const r = await send(message({ to: ['audit@dest.test'], send_at: inSeconds(3600) }));
    const before = await settledAuditEvents(env.stack, env.admin);
    expect((await cancel(r.body.emails[0].id)).status).toBe(200);
    expect((await cancel(r.body.emails[0].id)).status).toBe(409);
    const added = addedEvents(before, await settledAuditEvents(env.stack, env.admin));
    expect(added.map((e) => [e.type, e.project_id, e.path, e.status])).toEqual([
      ['email.cancel', env.tenant.project.id, `/api/v1/emails/${r.body.emails[0].id}/cancel`, 200],
    ]);
  });

  test('needs emails:write: a reader is refused 403 and nothing changes', async () => {
    const r = await send(message({ to: ['perm@dest.test'], send_at: inSeconds(3600) }));
    const answer = await cancel(r.body.emails[0].id, env.keys.reader);
    expect(answer.status).toBe(403);
    expect(answer.body).toEqual({ error: 'permission emails:write required' });
    expect((await logged(r.body.emails[0].id)).status).toBe('queued');
    expect((await cancel(r.body.emails[0].id)).status).toBe(200);
  });
});
