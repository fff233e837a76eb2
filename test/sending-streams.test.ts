// Streams, one-click unsubscribe and the bulk-sender rules end to end (issue
// 29): a real relay node delivers over SMTP to a recording MX; the bytes that
// arrive carry List-Unsubscribe and List-Unsubscribe-Post inside the DKIM
// signature (mailauth verifies it against the published key); the link's POST
// suppresses the address for the stream (the next broadcast send is
// `suppressed`, a transactional one is not), its GET changes nothing, and
// forged, altered, expired and cross-project tokens change nothing; the
// `mailto:` form arrives at the node's inbound listener like a report; a
// complaint over the threshold fires once; broadcast mail from a domain
// without DMARC is refused, until the operator switches the rule off.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Resolver } from 'node:dns/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { startReceiver, type ReceivedMessage, type Receiver } from '../relay-node/test-support/receiver.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import type * as MailauthModule from '../relay-node/node_modules/mailauth/index.js';
import { httpsToken } from '../edge/src/services/unsubscribe/token.js';
import { enroll, makeInstallationWide } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const fromRelayNode = createRequire(new URL('../relay-node/package.json', import.meta.url));
const { authenticate } = fromRelayNode('mailauth') as typeof MailauthModule;

const PUBLIC_URL = 'https://mail.edgemail.test';
const BOUNCE_DOMAIN = 'bounces.mail.edgemail.test';

let stack: TestStack;
let dns: TestDnsServer;
let rx: Receiver;
let hooks: WebhookReceiver;
let node: RelayNode;
let stateDir: string;
let admin: string;
let sender: string;
let manager: string;
let projectId: string;
let otherSender: string;
let otherProjectId: string;
const logs: LogLine[] = [];

async function verifiedDomain(token: string, name: string, dmarc: boolean) {
  const domain = await stack.call('POST', '/api/v1/domains', { token, body: { name } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  for (const record of domain.body.domain.dns_records as { name: string; value: string; purpose: string }[]) {
    if (record.purpose === 'dkim' || record.purpose === 'spf') dns.set(record.name, { TXT: [record.value.replace(/include:\S+/, 'ip4:127.0.0.1')] });
    if (record.purpose === 'dmarc' && dmarc) dns.set(record.name, { TXT: [record.value] });
  }
  // The last verification's verdicts, as the verify route stores them (its DNS checks have tests of their own).
  const verification = { dkim: { ok: true }, spf: { ok: true }, dmarc: dmarc ? { ok: true, found: ['v=DMARC1; p=none'] } : { ok: false, found: [], problem: 'missing' } };
  await stack.sql.query('UPDATE domains SET verified_at = now(), verification = $2 WHERE id = $1', [domain.body.domain.id, JSON.stringify(verification)]);
}

beforeAll(async () => {
  stack = await startTestStack({
    settings: {
      // The bounce domain (the mailto: of List-Unsubscribe) is bounces.<host of server.public_url>.
      SERVICE_SERVER_PUBLIC_URL: PUBLIC_URL,
      SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000',
    },
  });
  admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'acme');
  const other = await seedProject(stack, admin, 'globex');
  projectId = tenant.project.id;
  otherProjectId = other.project.id;
  sender = (await tenant.key(['emails:write', 'emails:read', 'suppressions:read', 'suppressions:write'])).token;
  manager = (await tenant.key(['domains:write', 'relay:write', 'webhooks:write', 'audit:read', 'analytics:read'])).token;
  otherSender = (await other.key(['emails:write', 'emails:read', 'domains:write', 'suppressions:read'])).token;

  rx = await startReceiver({ starttls: false });
  dns = await startDnsServer({
    'mx.dest.test': { A: ['127.0.0.1'] },
    'dest.test': { MX: [{ preference: 10, exchange: 'mx.dest.test' }] },
  });
  await verifiedDomain(manager, 'acme.test', true);
  await verifiedDomain(manager, 'plain.test', false);
  await verifiedDomain(otherSender, 'globex.test', true);

  hooks = await startWebhookReceiver();
  const webhook = await stack.call('POST', '/api/v1/webhooks', {
    token: manager, body: { url: `${hooks.url}/hook`, events: ['email.unsubscribed', 'project.complaint_threshold_crossed'] },
  });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);

  // The operator's node: installation-wide, so it takes the bounce domain (and the mailto: unsubscribes).
  const enrolled = await enroll(stack, manager, 'mx-a');
  await makeInstallationWide(stack, enrolled.id);
  stateDir = mkdtempSync(join(tmpdir(), 'sending-streams-'));
  await writeNodeState(stateDir, { edge_url: stack.url, node_id: enrolled.id, name: 'mx-a', token: enrolled.token, enrolled_at: new Date().toISOString() });
  node = await startTestNode({
    stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs),
    env: {
      SERVICE_OUTBOUND_MX_PORT: String(rx.port), SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true',
      SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false', SERVICE_OUTBOUND_HELO_NAME: 'relay-a.acme.test',
    },
    outbound: { idlePollMs: 200 },
  });
});

afterAll(async () => {
  await node?.stop();
  await rx?.close();
  await hooks?.close();
  await dns?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

// ---- helpers -----------------------------------------------------------------------------------

type Sent = { id: string; recipient: string; status: string; stream: string };

async function send(body: Record<string, unknown>, token = sender): Promise<Sent> {
  const r = await stack.call('POST', '/api/v1/emails/send', {
    token, body: { from: 'Acme News <news@acme.test>', subject: `Hello ${crypto.randomUUID().slice(0, 8)}`, text: 'Hello there.', ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.emails[0];
}

const emailOf = async (id: string, token = sender) => (await stack.call('GET', `/api/v1/emails/${id}`, { token })).body.email;
const untilStatus = (id: string, status: string, token = sender) => eventually(() => emailOf(id, token), (e) => e.status === status, 15_000);

/** Sends and waits until the recording MX has it. */
async function delivered(body: Record<string, unknown>, token = sender): Promise<{ email: Sent; arrival: ReceivedMessage; text: string }> {
  const email = await send(body, token);
  await untilStatus(email.id, 'sent', token);
  const arrival = rx.messages.find((m) => m.rcptTo[0] === email.recipient.toLowerCase() && m.mailFrom.includes(email.id.replace(/-/g, '')))!;
  expect(arrival).toBeDefined();
  return { email, arrival, text: arrival.bytes.toString('latin1') };
}

/** A header's value, unfolded. */
const header = (text: string, name: string) => {
  const head = text.slice(0, text.indexOf('\r\n\r\n')).replace(/\r\n[ \t]+/g, ' ');
  return new RegExp(`^${name}:[ \\t]*(.*)$`, 'im').exec(head)?.[1] ?? null;
};

/** The https link and the mailto address of a List-Unsubscribe value. */
function links(value: string): { https: string; mailto: string } {
  const https = /<(https:[^>]+)>/.exec(value)?.[1];
  const mailto = /<mailto:([^>?]+)(\?[^>]*)?>/.exec(value)?.[1];
  expect(https, value).toBeDefined();
  expect(mailto, value).toBeDefined();
  return { https: https!, mailto: mailto! };
}

/** The link, asked of the test's Worker (the message names the public URL). */
const local = (link: string) => link.replace(PUBLIC_URL, stack.url);
const tokenOf = (link: string) => link.slice(link.lastIndexOf('/') + 1);

const oneClick = (link: string, body = 'List-Unsubscribe=One-Click', headers: Record<string, string> = {}) =>
  fetch(local(link), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });

/** What the attacks must leave as it was. */
async function state() {
  const q = async (sql: string) => (await stack.sql.query(sql)).rows;
  return {
    suppressions: await q("SELECT project_id, address, reason::text, stream FROM suppressions ORDER BY project_id, address, stream"),
    unsubscribes: await q('SELECT email_id, stream, method FROM unsubscribes ORDER BY email_id'),
    outbox: await q("SELECT count(*)::int AS n FROM outbox WHERE event = 'email.unsubscribed'"),
    audit: await q("SELECT count(*)::int AS n FROM audit_events WHERE type = 'email.unsubscribed'"),
  };
}

async function verifyDkim(arrival: ReceivedMessage) {
  const resolver = new Resolver();
  resolver.setServers([dns.address]);
  const verdict = await authenticate(arrival.bytes, {
    ip: '127.0.0.1', helo: arrival.helo, sender: arrival.mailFrom, mta: 'mx.dest.test',
    resolver: (name: string, rr: string) => resolver.resolve(name, rr) as never,
  });
  return verdict.dkim.results[0] as { status: { result: string }; signingDomain: string; signingHeaders?: { keys: string } };
}

// ---- the tests ---------------------------------------------------------------------------------

describe('streams', () => {
  test('GET /api/v1/streams lists the built-in two; a project stream is created, used by a send, refused when unknown, deleted', async () => {
    const listed = await stack.call('GET', '/api/v1/streams', { token: sender });
    expect(listed.status).toBe(200);
    expect(listed.body.streams.map((s: { name: string; kind: string; built_in: boolean }) => [s.name, s.kind, s.built_in]))
      .toEqual([['transactional', 'transactional', true], ['broadcast', 'broadcast', true]]);

    const created = await stack.call('POST', '/api/v1/streams', { token: sender, body: { name: 'newsletter', kind: 'broadcast', description: 'Monthly news' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.stream).toMatchObject({ name: 'newsletter', kind: 'broadcast', built_in: false, description: 'Monthly news' });
    expect((await stack.call('POST', '/api/v1/streams', { token: sender, body: { name: 'newsletter', kind: 'transactional' } })).status).toBe(409);
    const builtIn = await stack.call('POST', '/api/v1/streams', { token: sender, body: { name: 'broadcast', kind: 'broadcast' } });
    expect(builtIn.status).toBe(400);
    expect(builtIn.body.fields).toHaveProperty('name');

    const onIt = await send({ to: 'nina@dest.test', stream: 'newsletter' });
    expect(onIt).toMatchObject({ stream: 'newsletter', status: 'queued' });
    expect((await emailOf(onIt.id)).stream).toBe('newsletter');

    const unknown = await stack.call('POST', '/api/v1/emails/send', { token: sender, body: { from: 'news@acme.test', to: 'x@dest.test', subject: 'x', text: 'x', stream: 'nope' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.fields.stream).toMatch(/not a stream of this project/);
    // Another project's stream is not this project's.
    const elsewhere = await stack.call('POST', '/api/v1/emails/send', { token: otherSender, body: { from: 'news@globex.test', to: 'x@dest.test', subject: 'x', text: 'x', stream: 'newsletter' } });
    expect(elsewhere.status).toBe(400);

    expect((await stack.call('DELETE', '/api/v1/streams/broadcast', { token: sender })).status).toBe(400);
    expect((await stack.call('DELETE', '/api/v1/streams/newsletter', { token: sender })).status).toBe(204);
    expect((await stack.call('DELETE', '/api/v1/streams/newsletter', { token: sender })).status).toBe(404);
  });

  test('a suppression of one stream holds for that stream only; one without a stream for every stream', async () => {
    const addr = `solo-${crypto.randomUUID().slice(0, 6)}@dest.test`;
    const s = await stack.call('POST', '/api/v1/suppressions', { token: sender, body: { address: addr, stream: 'broadcast' } });
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    expect(s.body.suppression.stream).toBe('broadcast');
    expect((await send({ to: addr, stream: 'broadcast' })).status).toBe('suppressed');
    expect((await send({ to: addr })).status).toBe('queued');
    const everywhere = await stack.call('POST', '/api/v1/suppressions', { token: sender, body: { address: addr } });
    expect(everywhere.status, JSON.stringify(everywhere.body)).toBe(201);
    expect(everywhere.body.suppression.stream).toBeNull();
    expect((await send({ to: addr })).status).toBe('suppressed');
    expect((await stack.call('POST', '/api/v1/suppressions', { token: sender, body: { address: addr, stream: 'nope' } })).status).toBe(400);
  });
});

describe('one-click unsubscribe', () => {
  let link: string;
  let mailto: string;
  let broadcastEmail: Sent;
  const ann = 'ann.unsub@dest.test';

  test('broadcast mail carries List-Unsubscribe (https + mailto) and List-Unsubscribe-Post, both in the DKIM signature mailauth verifies', async () => {
    const { email, arrival, text } = await delivered({ to: ann, stream: 'broadcast', html: '<p>News</p>' });
    broadcastEmail = email;
    expect(email.stream).toBe('broadcast');
    const value = header(text, 'List-Unsubscribe');
    expect(value).not.toBeNull();
    ({ https: link, mailto } = links(value!));
    expect(link).toMatch(new RegExp(`^${PUBLIC_URL}/unsubscribe/[0-9a-f]{32}\\.[0-9a-z]+\\.[A-Za-z0-9_-]{43}$`));
    expect(mailto).toMatch(new RegExp(`^unsub-${email.id.replace(/-/g, '')}-[0-9a-f]{20}@${BOUNCE_DOMAIN.replace(/\./g, '\\.')}$`));
    expect(header(text, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');

    const dkim = await verifyDkim(arrival);
    expect(dkim.status.result).toBe('pass');
    expect(dkim.signingDomain).toBe('acme.test');
    const signed = dkim.signingHeaders!.keys.toLowerCase().split(/\s*:\s*/);
    expect(signed).toContain('list-unsubscribe');
    expect(signed).toContain('list-unsubscribe-post');
  });

  test('transactional mail carries none, unless the send asks (list_unsubscribe: true), then both, DKIM-covered', async () => {
    const plain = await delivered({ to: 'tom.unsub@dest.test' });
    expect(plain.email.stream).toBe('transactional');
    expect(header(plain.text, 'List-Unsubscribe')).toBeNull();
    expect(header(plain.text, 'List-Unsubscribe-Post')).toBeNull();

    const opted = await delivered({ to: 'tina.unsub@dest.test', list_unsubscribe: true });
    expect(header(opted.text, 'List-Unsubscribe-Post')).toBe('List-Unsubscribe=One-Click');
    links(header(opted.text, 'List-Unsubscribe')!);
    const dkim = await verifyDkim(opted.arrival);
    expect(dkim.status.result).toBe('pass');
    expect(dkim.signingHeaders!.keys.toLowerCase()).toContain('list-unsubscribe-post');
  });

  test('a custom List-Unsubscribe on mail the service writes one for is refused; list_unsubscribe false on broadcast too', async () => {
    const withHeader = await stack.call('POST', '/api/v1/emails/send', {
      token: sender, body: { from: 'news@acme.test', to: 'x@dest.test', subject: 'x', text: 'x', stream: 'broadcast', headers: { 'List-Unsubscribe': '<mailto:x@acme.test>' } },
    });
    expect(withHeader.status).toBe(400);
    expect(JSON.stringify(withHeader.body.fields)).toContain('List-Unsubscribe');
    const off = await stack.call('POST', '/api/v1/emails/send', {
      token: sender, body: { from: 'news@acme.test', to: 'x@dest.test', subject: 'x', text: 'x', stream: 'broadcast', list_unsubscribe: false },
    });
    expect(off.status).toBe(400);
    expect(off.body.fields).toHaveProperty('list_unsubscribe');
  });

  test('GET shows a confirmation page (strict CSP, a form that POSTs) and changes nothing', async () => {
    const before = await state();
    const r = await fetch(local(link));
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/html/);
    expect(r.headers.get('content-security-policy')).toBe("default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'");
    const page = await r.text();
    expect(page).toContain('<form method="post">');
    expect(page).toContain('name="List-Unsubscribe" value="One-Click"');
    expect(page).toContain('broadcast');
    expect(page).not.toContain(ann);
    expect(page).not.toMatch(/<script|<style|<img/i);
    // HEAD and a second GET: still nothing.
    expect((await fetch(local(link), { method: 'HEAD' })).status).toBe(200);
    expect(await state()).toEqual(before);
  });

  test('forged, altered, expired, future and cross-project tokens: 404/410, nothing changed', async () => {
    const before = await state();
    const token = tokenOf(link);
    const [idHex, iat, mac] = token.split('.') as [string, string, string];
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const base = `${PUBLIC_URL}/unsubscribe/`;
    const key = { 'database.crypto.encryption_key': stack.encryptionKey };
    const facts = { projectId, stream: 'broadcast', address: ann, emailId: broadcastEmail.id };
    const now = Math.floor(Date.now() / 1000);
    // An email of the other project, and a token for it made with the wrong facts.
    const theirs = await send({ from: 'news@globex.test', to: 'gil@dest.test', stream: 'broadcast' }, otherSender);
    const attempts: [string, number][] = [
      [`${base}${idHex}.${iat}.${flip(mac, 5)}`, 404], // altered MAC
      [`${base}${idHex}.${(parseInt(iat, 36) + 1).toString(36)}.${mac}`, 404], // altered issue time
      [`${base}${idHex[0] === 'a' ? 'b' : 'a'}${idHex.slice(1)}.${iat}.${mac}`, 404], // another email id
      [`${base}${theirs.id.replace(/-/g, '')}.${iat}.${mac}`, 404], // the other project's email, our MAC
      // A MAC made with our key (as only the service can) but binding facts that are not the email's: another address, project, stream.
      [`${base}${await httpsToken(key, { ...facts, address: 'eve@dest.test' }, now)}`, 404],
      [`${base}${await httpsToken(key, { ...facts, projectId: otherProjectId }, now)}`, 404],
      [`${base}${await httpsToken(key, { ...facts, stream: 'transactional' }, now)}`, 404],
      [`${base}${(await httpsToken(key, { ...facts, emailId: theirs.id, projectId }, now))}`, 404],
      // Forged: a random MAC of the right shape; and garbage.
      [`${base}${idHex}.${iat}.${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')}`, 404],
      [`${base}not-a-token`, 404],
      // Expired (issued 61 days ago, past the 60-day default) and issued in the future.
      [`${base}${await httpsToken(key, facts, now - 61 * 86_400)}`, 410],
      [`${base}${await httpsToken(key, facts, now + 86_400)}`, 404],
    ];
    for (const [url, status] of attempts) {
      const r = await oneClick(url, undefined, { accept: 'application/json' });
      expect(r.status, url).toBe(status);
      expect((await r.json()).error, url).toMatch(/nothing changed/);
      expect((await fetch(local(url))).status, url).toBe(status);
    }
    // A valid token without the RFC 8058 body: refused, nothing changed.
    expect((await oneClick(link, 'hello=1')).status).toBe(400);
    expect((await fetch(local(link), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'List-Unsubscribe=One-Click' })).status).toBe(415);
    expect(await state()).toEqual(before);
    // The other project's mail is not suppressed by any of it.
    expect((await stack.call('GET', '/api/v1/suppressions', { token: otherSender })).body.suppressions).toEqual([]);
  });

  test('POST suppresses the address for the stream at once (reason unsubscribe), fires email.unsubscribed and an audit event; again: same answer, nothing more', async () => {
    const r = await oneClick(link, 'List-Unsubscribe=One-Click', { accept: 'application/json' });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ unsubscribed: true, stream: 'broadcast' });
    const suppressions = (await stack.call('GET', '/api/v1/suppressions', { token: sender })).body.suppressions.filter((s: { address: string }) => s.address === ann);
    expect(suppressions).toEqual([expect.objectContaining({ address: ann, reason: 'unsubscribe', stream: 'broadcast', source_email_id: broadcastEmail.id, expires_at: null })]);

    const [hook] = await eventually(async () => hooks.received().filter((h) => h.body?.event === 'email.unsubscribed' && h.body.data.id === broadcastEmail.id), (l) => l.length > 0);
    expect(hook!.body.data).toMatchObject({ id: broadcastEmail.id, project_id: projectId, recipients: [ann], stream: 'broadcast', unsubscribe: { method: 'one_click', stream: 'broadcast' } });
    const audit = await stack.call('GET', '/api/v1/audit-log?limit=200', { token: manager });
    const events = audit.body.events.filter((e: { type: string }) => e.type === 'email.unsubscribed');
    expect(events).toHaveLength(1);
    expect(events[0].path).toBe('/unsubscribe/{token}');

    // The page's own button (multipart, as a browser may send it) and a repeat: 200, nothing more.
    const form = new FormData();
    form.set('List-Unsubscribe', 'One-Click');
    const again = await fetch(local(link), { method: 'POST', body: form });
    expect(again.status).toBe(200);
    expect(again.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(await again.text()).toContain('Unsubscribed');
    const rows = await stack.sql.query("SELECT count(*)::int AS n FROM unsubscribes WHERE email_id = $1", [broadcastEmail.id]);
    expect(rows.rows[0].n).toBe(1);
    expect((await stack.sql.query("SELECT count(*)::int AS n FROM outbox WHERE event = 'email.unsubscribed'")).rows[0].n).toBe(1);

    // The next broadcast send to the address is suppressed; a transactional one is not.
    const next = await send({ to: ann, stream: 'broadcast' });
    expect(next).toMatchObject({ status: 'suppressed' });
    expect((await emailOf(next.id)).error_message).toBe('recipient is suppressed (unsubscribe)');
    expect((await send({ to: ann })).status).toBe('queued');
  });

  test('the mailto: form, sent to the node\'s inbound listener like a report, unsubscribes too; a bad MAC changes nothing', async () => {
    const { email, text } = await delivered({ to: 'mo.unsub@dest.test', stream: 'broadcast' });
    const address = links(header(text, 'List-Unsubscribe')!).mailto;
    const before = await state();
    const forged = address.replace(/-([0-9a-f]{20})@/, (_, mac: string) => `-${mac.startsWith('0') ? '1' : '0'}${mac.slice(1)}@`);
    const mail = (to: string) => `From: mo.unsub@dest.test\r\nTo: ${to}\r\nSubject: unsubscribe\r\nMessage-ID: <${crypto.randomUUID()}@dest.test>\r\n\r\nunsubscribe\r\n`;
    const refused = await sendMessage({ port: node.port, from: 'mo.unsub@dest.test', to: forged, message: mail(forged), helo: 'mx.dest.test' });
    expect(refused.response).toMatch(/^250 /);
    await new Promise((r) => setTimeout(r, 1500));
    expect(await state()).toEqual(before);

    const sent = await sendMessage({ port: node.port, from: 'mo.unsub@dest.test', to: address, message: mail(address), helo: 'mx.dest.test' });
    expect(sent.error, JSON.stringify(sent.error)).toBeUndefined();
    expect(sent.response).toMatch(/^250 /);
    const rows = await eventually(async () => (await stack.sql.query('SELECT method, stream, address FROM unsubscribes WHERE email_id = $1', [email.id])).rows, (r) => r.length > 0, 15_000);
    expect(rows).toEqual([{ method: 'mailto', stream: 'broadcast', address: 'mo.unsub@dest.test' }]);
    expect((await send({ to: 'mo.unsub@dest.test', stream: 'broadcast' })).status).toBe('suppressed');
    expect((await stack.sql.query('SELECT count(*)::int AS n FROM inbound_emails')).rows[0].n).toBe(0);
  });
});

describe('bulk-sender rules', () => {
  test('broadcast mail from a domain without DMARC is refused naming the rule; transactional is not; the operator can switch it off', async () => {
    const body = { from: 'news@plain.test', to: 'x@dest.test', subject: 'x', text: 'x', stream: 'broadcast' };
    const refused = await stack.call('POST', '/api/v1/emails/send', { token: sender, body });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatch(/plain\.test has no DMARC record.*Gmail's and Yahoo's bulk sender rule.*sending\.broadcast_requires_dmarc/);
    expect(refused.body.fields).toHaveProperty('from');
    expect((await stack.sql.query("SELECT count(*)::int AS n FROM outbound_messages WHERE \"from\" LIKE '%plain.test%'")).rows[0].n).toBe(0);
    expect((await stack.call('POST', '/api/v1/emails/send', { token: sender, body: { ...body, stream: undefined } })).status).toBe(201);

    const off = await stack.call('PATCH', '/api/v1/admin/settings', { token: admin, body: { 'sending.broadcast_requires_dmarc': false } });
    expect(off.status, JSON.stringify(off.body)).toBe(200);
    try {
      const allowed = await eventually(() => stack.call('POST', '/api/v1/emails/send', { token: sender, body }), (r) => r.status !== 400, 10_000);
      expect(allowed.status).toBe(201);
    } finally {
      await stack.call('PATCH', '/api/v1/admin/settings', { token: admin, body: { 'sending.broadcast_requires_dmarc': null } });
    }
  });

  test('analytics shows complaint and unsubscribe rates per day and stream; a complaint rate over 0.3% fires the audit event, the webhook and the usage notice once', async () => {
    // A complaint (ARF to the return path, as a mailbox provider's feedback loop sends it) on a delivered broadcast email.
    const { email, arrival } = await delivered({ to: 'carl.complains@dest.test', stream: 'broadcast' });
    const arf = [
      `From: Feedback Loop <fbl@isp.dest.test>`, `To: ${arrival.mailFrom}`, 'Subject: FW: complaint', `Message-ID: <${crypto.randomUUID()}@isp.dest.test>`,
      'MIME-Version: 1.0', 'Content-Type: multipart/report; report-type=feedback-report; boundary="ARF"', '',
      '--ARF', 'Content-Type: text/plain', '', 'An abuse report.', '',
      '--ARF', 'Content-Type: message/feedback-report', '', 'Feedback-Type: abuse', 'User-Agent: ExampleFBL/1.0', 'Version: 1', '',
      '--ARF', 'Content-Type: message/rfc822', 'Content-Disposition: inline', '',
    ].join('\r\n') + '\r\n' + arrival.bytes.toString('latin1') + '\r\n--ARF--\r\n';
    const reported = await sendMessage({ port: node.port, from: '', to: arrival.mailFrom, message: arf, helo: 'mx.dest.test' });
    expect(reported.response).toMatch(/^250 /);
    await untilStatus(email.id, 'complained');

    const analytics = await stack.call('GET', '/api/v1/analytics', { token: manager });
    expect(analytics.status, JSON.stringify(analytics.body)).toBe(200);
    const broadcast = analytics.body.analytics.streams.find((s: { stream: string }) => s.stream === 'broadcast');
    const today = new Date().toISOString().slice(0, 10);
    const day = broadcast.days.find((d: { day: string }) => d.day === today);
    expect(day.complaints).toBe(1);
    expect(day.unsubscribes).toBe(2);
    expect(day.delivered).toBeGreaterThanOrEqual(3);
    expect(day.complaint_rate).toBeCloseTo(1 / day.delivered);
    expect(day.unsubscribe_rate).toBeCloseTo(2 / day.delivered);
    expect(analytics.body.analytics.streams.find((s: { stream: string }) => s.stream === 'transactional').totals.unsubscribes).toBe(0);

    const auditCount = async () => (await stack.sql.query("SELECT count(*)::int AS n FROM audit_events WHERE type = 'project.complaint_threshold_crossed' AND project_id = $1", [projectId])).rows[0].n;
    const usage = await stack.call('GET', '/api/v1/usage', { token: sender });
    expect(usage.status).toBe(200);
    expect(usage.body.usage.notices).toEqual([expect.objectContaining({ code: 'complaint_rate_over_threshold', threshold: 0.003, complaint_rate: expect.any(Number) })]);
    expect(usage.body.usage.notices[0].message).toMatch(/over 0\.3% \(sending\.complaint_threshold_basis_points\)/);
    // Read again, and the cron's run: still one crossing.
    expect((await stack.call('GET', '/api/v1/usage', { token: sender })).body.usage.notices).toHaveLength(1);
    // The minute cron checks it too (its status is not this test's: the run has other work that may fail here).
    expect(await stack.runCron('* * * * *')).toBe(200);
    expect(await auditCount()).toBe(1);
    const crossed = await eventually(async () => hooks.received().filter((h) => h.body?.event === 'project.complaint_threshold_crossed'), (l) => l.length > 0);
    expect(crossed).toHaveLength(1);
    expect(crossed[0]!.body.data).toMatchObject({ project_id: projectId, threshold: 0.003, complaints: 1 });
    // The other project is below it: no notice.
    expect((await stack.call('GET', '/api/v1/usage', { token: otherSender })).body.usage.notices).toEqual([]);

    // Back under the threshold (here: the operator raises it), the notice goes; crossing again fires again.
    await stack.call('PATCH', '/api/v1/admin/settings', { token: admin, body: { 'sending.complaint_threshold_basis_points': 9_999 } });
    try {
      await eventually(() => stack.call('GET', '/api/v1/usage', { token: sender }), (r) => r.body.usage.notices.length === 0, 10_000);
    } finally {
      await stack.call('PATCH', '/api/v1/admin/settings', { token: admin, body: { 'sending.complaint_threshold_basis_points': null } });
    }
    await eventually(() => stack.call('GET', '/api/v1/usage', { token: sender }), (r) => r.body.usage.notices.length === 1, 10_000);
    expect(await auditCount()).toBe(2);
  });
});
