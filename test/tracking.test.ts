// Open and click tracking (issue 29, docs/tracking.md) end to end: a real
// relay node claims from the real edge and delivers over SMTP to a recording
// MX; the HTML that arrives has its links rewritten and a pixel appended,
// the text part does not change, and mailauth (the outside verifier) finds
// the DKIM signature intact. Then the tracked URLs are fetched from the
// Worker as a mail client would: a click redirects to the URL that was in
// that message and nowhere else; altered, forged and cross-email tokens are
// 404 and record nothing; opens and clicks arrive as webhooks and on the
// console stream, and analytics counts them, machines apart.
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RelayNode } from '../relay-node/src/index.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import type * as MailauthModule from '../relay-node/node_modules/mailauth/index.js';
import type * as SmtpServerModule from '../relay-node/node_modules/smtp-server/dist/cjs/smtp-server.js';
import { startDohResponder, type DohResponder } from './support/doh-responder.js';
import { enroll } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { openSse, type SseStream } from './support/sse.js';
import { platformToken, seedProject, sessionCookie, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from './support/webhook-receiver.js';

const fromRelayNode = createRequire(new URL('../relay-node/package.json', import.meta.url));
const { SMTPServer } = fromRelayNode('smtp-server') as typeof SmtpServerModule;
const { authenticate } = fromRelayNode('mailauth') as typeof MailauthModule;
const { simpleParser } = fromRelayNode('mailparser') as { simpleParser: (input: Buffer) => Promise<{ html: string | false; text?: string }> };

/** `tracking.machine_window` here: a request sooner than this after the claim is a prefetch. */
const WINDOW_S = 8;
const PUBLIC = 'https://mail.example.com';
const TRACKING_LIMIT = 80;

let stack: TestStack;
let dns: TestDnsServer;
let doh: DohResponder;
let hooks: WebhookReceiver;
let node: RelayNode;
let stream: SseStream;
let projectId: string;
let domainId: string;
let sender: string;
let manager: string;
let reporter: string;
let stateDir: string;
const arrivals: { bytes: Buffer; messageId: string; helo: string; mailFrom: string }[] = [];
const logs: LogLine[] = [];
let closeReceiver: () => Promise<void>;

async function startReceiver(): Promise<number> {
  const server = new SMTPServer({
    logger: false, disableReverseLookup: true, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'],
    onData(data, session, callback) {
      const chunks: Buffer[] = [];
      data.on('data', (chunk: Buffer) => chunks.push(chunk));
      data.on('end', () => {
        const bytes = Buffer.concat(chunks);
        arrivals.push({
          bytes, helo: session.hostNameAppearsAs, mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          messageId: /^Message-ID:\s*(<[^>\r\n]+>)/im.exec(bytes.toString('latin1'))?.[1] ?? '',
        });
        callback(null, 'Ok');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  closeReceiver = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return (server.server.address() as AddressInfo).port;
}

beforeAll(async () => {
  doh = await startDohResponder();
  stack = await startTestStack({
    settings: {
      SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      SERVICE_TRACKING_MACHINE_WINDOW: `${WINDOW_S}s`,
      SERVICE_DNS_DOH_URL: doh.url,
      SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000',
      // Every request of this file comes from 127.0.0.1; the last test runs into this.
      SERVICE_RATELIMIT_TRACKING_PER_MINUTE: String(TRACKING_LIMIT),
    },
  });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'tracking');
  projectId = tenant.project.id;
  sender = (await tenant.key(['emails:write', 'emails:read'])).token;
  manager = (await tenant.key(['domains:write', 'domains:read', 'relay:write', 'webhooks:write'])).token;
  reporter = (await tenant.key(['analytics:read'])).token;

  const port = await startReceiver();
  hooks = await startWebhookReceiver();
  dns = await startDnsServer({
    'mx.dest.test': { A: ['127.0.0.1'] },
    'dest.test': { MX: [{ preference: 10, exchange: 'mx.dest.test' }] },
  });
  const domain = await stack.call('POST', '/api/v1/domains', { token: manager, body: { name: 'acme.test', dkim_algorithm: 'ed25519' } });
  expect(domain.status, JSON.stringify(domain.body)).toBe(201);
  domainId = domain.body.domain.id;
  for (const record of domain.body.domain.dns_records as { name: string; value: string; purpose: string }[]) {
    if (record.purpose === 'dkim') dns.set(record.name, { TXT: [record.value] });
  }
  await stack.sql.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now() WHERE id = $1', [domainId]);
  const webhook = await stack.call('POST', '/api/v1/webhooks', { token: manager, body: { url: `${hooks.url}/t`, events: ['email.opened', 'email.clicked'] } });
  expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
  stream = await openSse(`${stack.url}/app/api/events`, { cookie: await sessionCookie(stack, tenant.user.id) });
  expect(stream.status).toBe(200);

  const enrolled = await enroll(stack, manager, 'tracking-node');
  stateDir = mkdtempSync(join(tmpdir(), 'tracking-'));
  await writeNodeState(stateDir, { edge_url: stack.url, node_id: enrolled.id, name: 'tracking-node', token: enrolled.token, enrolled_at: new Date().toISOString() });
  node = await startTestNode({
    stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), hostName: 'relay.acme.test',
    env: { SERVICE_OUTBOUND_MX_PORT: String(port), SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false', SERVICE_OUTBOUND_ALLOW_PRIVATE_MX: 'true', SERVICE_OUTBOUND_HELO_NAME: 'relay.acme.test' },
    outbound: { idlePollMs: 200, concurrency: 4, stopTimeoutMs: 2000 },
  });
}, 90_000);

afterAll(async () => {
  stream?.close();
  await node?.stop();
  await closeReceiver?.();
  await hooks?.close();
  await dns?.close();
  await doh?.close();
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const HTML = [
  '<html><body><p>Hello <a href="https://shop.example.org/order?id=42&amp;ref=mail">your order</a>,',
  '<a href=\'http://EXAMPLE.org/a b\'>spaced</a>, <a class="x" href=https://bare.example.org/p>bare</a>,',
  '<a href="mailto:help@acme.test">mail us</a>, <a href="tel:+15555550100">call</a>, <a href="#top">top</a>,',
  '<a href="/relative">relative</a>, <a href="https://acme.test/unsubscribe?u=1">unsubscribe</a>,',
  '<a data-track="off" href="https://private.example.org/">not tracked</a>, <a href="https://mail.example.com/own">own host</a>.</p>',
  '<img src="https://cdn.example.org/logo.png"></body></html>',
].join('\n');
const TEXT = 'Hello, your order: https://shop.example.org/order?id=42&ref=mail\nUnsubscribe: https://acme.test/unsubscribe?u=1\n';

interface Delivered { emailId: string; bytes: Buffer; html: string; text: string | undefined; mailFrom: string; helo: string }

async function sendAndReceive(body: Record<string, unknown>): Promise<Delivered> {
  const r = await stack.call('POST', '/api/v1/emails/send', {
    token: sender, body: { from: 'Acme <news@acme.test>', to: 'ann@dest.test', subject: `Hi ${crypto.randomUUID().slice(0, 8)}`, html: HTML, text: TEXT, tags: ['promo'], ...body },
  });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  const [arrival] = await eventually(async () => arrivals.filter((a) => a.messageId === `<${r.body.message_id}@acme.test>`), (a) => a.length > 0, 20_000);
  const parsed = await simpleParser(arrival!.bytes);
  return { emailId: r.body.emails[0].id, bytes: arrival!.bytes, html: parsed.html || '', text: parsed.text, mailFrom: arrival!.mailFrom, helo: arrival!.helo };
}

async function dkimResult(d: Delivered): Promise<string> {
  const resolver = new Resolver();
  resolver.setServers([dns.address]);
  const verdict = await authenticate(d.bytes, {
    ip: '127.0.0.1', helo: d.helo, sender: d.mailFrom, mta: 'mx.dest.test',
    resolver: (name: string, rr: string) => resolver.resolve(name, rr) as never,
  });
  return (verdict.dkim.results[0] as { status: { result: string } }).status.result;
}

const trackedLinks = (html: string) => [...html.matchAll(/href="(https:\/\/mail\.example\.com\/t\/c\/[^"]+)"/g)].map((m) => m[1]!);
const pixelOf = (html: string) => /<img src="(https:\/\/mail\.example\.com\/t\/o\/[^"]+)"/.exec(html)?.[1];
/** The tracked URL, asked of the Worker (the service's public host is `mail.example.com`, served here at stack.url). */
const local = (url: string) => url.replace(PUBLIC, stack.url);
const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36';

function get(url: string, init: { method?: string; ua?: string | null } = {}) {
  const headers: Record<string, string> = {};
  // null: an empty User-Agent (fetch would otherwise send its own, `node`).
  headers['user-agent'] = init.ua === null ? '' : init.ua ?? BROWSER;
  return fetch(local(url), { method: init.method ?? 'GET', redirect: 'manual', headers });
}

/** Unix seconds the token was issued (bytes 18..21 of its payload): when a request stops being "too soon". */
function issuedAt(url: string): number {
  const payload = Buffer.from(url.split('/').pop()!.split('.')[0]!, 'base64url');
  return payload.readUInt32BE(18);
}

async function untilHuman(url: string): Promise<void> {
  const wait = (issuedAt(url) + WINDOW_S + 1) * 1000 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

const trackingRows = async () => Number((await stack.sql.query(`SELECT count(*)::int AS n FROM outbox WHERE project_id = $1 AND event IN ('email.opened', 'email.clicked')`, [projectId])).rows[0].n);
const hooksFor = (emailId: string, event: string) => hooks.received().filter((r) => r.body?.event === event && r.body?.data?.id === emailId);

describe('open and click tracking', () => {
  test('off by default: the HTML arrives as sent, without a pixel', async () => {
    const d = await sendAndReceive({});
    expect(trackedLinks(d.html)).toEqual([]);
    expect(pixelOf(d.html)).toBeUndefined();
    expect(d.html).toContain('href="https://shop.example.org/order?id=42&amp;ref=mail"');
    expect(await dkimResult(d)).toBe('pass');
  });

  test('per send: the HTML\'s http(s) links point at the tracking host and a pixel is appended; mailto, tel, anchors, relative, unsubscribe, opted-out and own-host links and the text part are untouched; DKIM passes', async () => {
    const d = await sendAndReceive({ tracking: { opens: true, clicks: true } });
    const links = trackedLinks(d.html);
    expect(links).toHaveLength(3);
    for (const kept of ['href="mailto:help@acme.test"', 'href="tel:+15555550100"', 'href="#top"', 'href="/relative"',
      'href="https://acme.test/unsubscribe?u=1"', 'href="https://private.example.org/"', 'href="https://mail.example.com/own"', 'src="https://cdn.example.org/logo.png"']) {
      expect(d.html).toContain(kept);
    }
    expect(d.html).not.toContain('shop.example.org');
    expect(pixelOf(d.html)).toBeDefined();
    expect(d.html.indexOf('/t/o/')).toBeLessThan(d.html.toLowerCase().lastIndexOf('</body>'));
    expect(d.text).toBe(TEXT);
    expect(await dkimResult(d)).toBe('pass');
  });

  test('a click redirects to the URL that was in the message, and only to it; altered, forged and cross-email tokens are 404, redirect nowhere and record nothing', async () => {
    const a = await sendAndReceive({ tracking: { clicks: true } });
    const b = await sendAndReceive({ tracking: { clicks: true } });
    const [shop, spaced, bare] = trackedLinks(a.html);
    await untilHuman(shop!);
    const before = await trackingRows();

    const [pa, ma] = shop!.split('/').pop()!.split('.');
    const [pb, mb] = trackedLinks(b.html)[0]!.split('/').pop()!.split('.');
    const base = `${PUBLIC}/t/c/`;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    const evil = Buffer.from(pa!, 'base64url');
    evil.write('https://evil.example/', 24);
    const refused = [
      `${base}${flip(pa!, 30)}.${ma}`, // a changed byte of the email id
      `${base}${flip(pa!, pa!.length - 3)}.${ma}`, // a changed byte of the URL
      `${base}${evil.toString('base64url')}.${ma}`, // another URL under the first link's MAC
      `${base}${pa}.${flip(ma!, 5)}`, // a changed MAC
      `${base}${pa}.${mb}`, // email A's link with email B's MAC
      `${base}${pb}.${ma}`, // email B's link with email A's MAC
      `${base}${Buffer.from('https://evil.example/').toString('base64url')}.${ma}`, // forged
      `${base}${pa}`, `${base}not-a-token`, `${PUBLIC}/t/o/${pa}.${ma}`, // no MAC; garbage; a click token as a pixel
    ];
    for (const url of refused) {
      const r = await get(url);
      expect(r.status, url).toBe(404);
      expect(r.headers.get('location'), url).toBeNull();
      expect(await r.json()).toEqual({ error: 'tracking link not found' });
    }

    const follow = async (url: string) => {
      const r = await get(url);
      expect(r.status).toBe(302);
      return r.headers.get('location');
    };
    expect(await follow(shop!)).toBe('https://shop.example.org/order?id=42&ref=mail');
    expect(await follow(spaced!)).toBe('http://example.org/a%20b');
    expect(await follow(bare!)).toBe('https://bare.example.org/p');
    // Only the three good clicks were recorded.
    await eventually(trackingRows, (n) => n === before + 3, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await trackingRows()).toBe(before + 3);
  });

  test('opens and clicks become email.opened / email.clicked (webhooks and the console stream), prefetches flagged as machine, and analytics counts human and machine apart', async () => {
    const d = await sendAndReceive({ tracking: { opens: true, clicks: true } });
    const [link] = trackedLinks(d.html);
    const pixel = pixelOf(d.html)!;
    // Right after delivery: a security scanner's prefetch and Apple's privacy proxy, then a link checker's HEAD.
    expect(Date.now() / 1000 - issuedAt(link!)).toBeLessThan(WINDOW_S);
    expect((await get(link!, { ua: BROWSER })).status).toBe(302); // too soon after delivery
    const apple = await get(pixel, { ua: 'Mozilla/5.0' });
    expect(apple.status).toBe(200);
    expect(apple.headers.get('content-type')).toBe('image/gif');
    expect(apple.headers.get('cache-control')).toContain('no-store');
    expect((await get(link!, { method: 'HEAD' })).status).toBe(302);
    expect((await get(link!, { ua: 'python-requests/2.32' })).status).toBe(302);
    expect((await get(pixel, { ua: null })).status).toBe(200);
    // Then the recipient reads it and clicks.
    await untilHuman(link!);
    expect((await get(pixel)).status).toBe(200);
    expect((await get(link!)).status).toBe(302);

    const clicks = await eventually(async () => hooksFor(d.emailId, 'email.clicked'), (r) => r.length === 4, 15_000);
    const opens = await eventually(async () => hooksFor(d.emailId, 'email.opened'), (r) => r.length === 3, 15_000);
    const verdicts = (list: typeof clicks) => list.map((h) => [h.body.data.tracking.machine, h.body.data.tracking.machine_reason, h.body.data.tracking.user_agent_class]).sort();
    expect(verdicts(clicks)).toEqual([
      [false, null, 'browser'], [true, 'bot', 'bot'], [true, 'head_request', 'browser'], [true, 'too_soon_after_delivery', 'browser'],
    ].sort());
    expect(verdicts(opens)).toEqual([[false, null, 'browser'], [true, 'apple_privacy_proxy', 'apple_proxy'], [true, 'no_user_agent', 'none']].sort());
    const human = clicks.find((h) => !h.body.data.tracking.machine)!;
    expect(human.body.data).toMatchObject({
      id: d.emailId, project_id: projectId, sender: 'news@acme.test', recipients: ['ann@dest.test'],
      tracking: { link: { url: 'https://shop.example.org/order?id=42&ref=mail', index: 0 }, at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) },
    });
    expect(opens[0]!.body.data.tracking).not.toHaveProperty('link');

    // The console's stream carries them as it carries every email event.
    const streamed = await stream.waitFor(7, (e) => e.event === 'email.status' && JSON.parse(e.data).data.id === d.emailId && /^email\.(opened|clicked)$/.test(JSON.parse(e.data).type), 15_000);
    expect(new Set(streamed.map((e) => JSON.parse(e.data).type))).toEqual(new Set(['email.opened', 'email.clicked']));

    const day = new Date().toISOString().slice(0, 10);
    const analytics = async (query: string) => (await stack.call('GET', `/api/v1/analytics?from=${day}&to=${day}${query}`, { token: reporter })).body.analytics;
    const all = await analytics('');
    // This test's events, at least (earlier tests clicked too): machine and human apart.
    expect(all.tracking.opens.human).toBeGreaterThanOrEqual(1);
    expect(all.tracking.opens.machine).toBeGreaterThanOrEqual(2);
    expect(all.tracking.clicks.machine).toBeGreaterThanOrEqual(3);
    expect(all.days[0].tracking).toEqual(all.tracking);
    const tagged = await analytics('&tag=promo');
    expect(tagged.tracking).toEqual(all.tracking);
    expect((await analytics('&tag=other')).tracking).toEqual({ opens: { human: 0, machine: 0 }, clicks: { human: 0, machine: 0 } });
  });

  test('a domain\'s setting turns tracking on for its mail; a send\'s own tracking overrides it', async () => {
    const off = await stack.call('GET', `/api/v1/domains/${domainId}/tracking`, { token: manager });
    expect(off.body.tracking).toEqual({ domain_id: domainId, opens: false, clicks: false, host: null, host_verified_at: null, cname: null });
    const on = await stack.call('PUT', `/api/v1/domains/${domainId}/tracking`, { token: manager, body: { opens: true, clicks: true } });
    expect(on.status, JSON.stringify(on.body)).toBe(200);
    expect(on.body.tracking).toMatchObject({ opens: true, clicks: true, host: null });

    const byDomain = await sendAndReceive({});
    expect(trackedLinks(byDomain.html)).toHaveLength(3);
    expect(pixelOf(byDomain.html)).toBeDefined();
    const overridden = await sendAndReceive({ tracking: { clicks: false } });
    expect(trackedLinks(overridden.html)).toEqual([]);
    expect(pixelOf(overridden.html)).toBeDefined();
    expect(await dkimResult(overridden)).toBe('pass');

    const bad = await stack.call('PUT', `/api/v1/domains/${domainId}/tracking`, { token: manager, body: { opens: true } });
    expect(bad.status).toBe(400);
    expect(bad.body.fields).toHaveProperty('clicks');
    await stack.call('PUT', `/api/v1/domains/${domainId}/tracking`, { token: manager, body: { opens: false, clicks: false } });
  });

  test('a custom tracking host is used once its CNAME to the service\'s host is found; one outside the domain or without the CNAME is refused', async () => {
    const put = (host: string) => stack.call('PUT', `/api/v1/domains/${domainId}/tracking`, { token: manager, body: { opens: false, clicks: true, host } });
    const outside = await put('links.other.test');
    expect(outside.status).toBe(400);
    expect(outside.body.fields.host).toBe('must be a name under acme.test (links.acme.test)');
    const missing = await put('links.acme.test');
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid request body: host: publish the record links.acme.test CNAME mail.example.com first (none found)');
    doh.set('links.acme.test', 'CNAME', ['elsewhere.example.']);
    expect((await put('links.acme.test')).body.fields.host).toContain('(found CNAME elsewhere.example)');

    doh.set('links.acme.test', 'CNAME', ['mail.example.com.']);
    const ok = await put('links.acme.test');
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.tracking).toMatchObject({ host: 'links.acme.test', host_verified_at: expect.any(String), cname: { name: 'links.acme.test', value: 'mail.example.com' } });

    const d = await sendAndReceive({});
    const links = [...d.html.matchAll(/href="(https:\/\/links\.acme\.test\/t\/c\/[^"]+)"/g)].map((m) => m[1]!);
    expect(links).toHaveLength(3);
    const r = await fetch(links[0]!.replace('https://links.acme.test', stack.url), { redirect: 'manual' });
    expect(r.status).toBe(302);
    expect(r.headers.get('location')).toBe('https://shop.example.org/order?id=42&ref=mail');
    await stack.call('PUT', `/api/v1/domains/${domainId}/tracking`, { token: manager, body: { opens: false, clicks: false } });
  });

  test('each client address is limited to ratelimit.tracking_per_minute requests a minute: beyond it 429 with Retry-After, and nothing recorded', async () => {
    const d = await sendAndReceive({ tracking: { opens: true } });
    const pixel = pixelOf(d.html)!;
    const answered: number[] = [];
    let refused: Response | undefined;
    // Twice the limit: a minute may turn over once while looping.
    for (let i = 0; i <= 2 * TRACKING_LIMIT && !refused; i++) {
      const r = await get(pixel);
      if (r.status === 429) {
        refused = r;
      } else {
        answered.push(r.status);
        await r.arrayBuffer();
      }
    }
    expect(refused, 'no 429 within the limit').toBeDefined();
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await refused!.json()).toEqual({ error: `rate limit exceeded: ${TRACKING_LIMIT} requests per minute` });
    expect(answered.every((s) => s === 200)).toBe(true);
    const opens = async () => Number((await stack.sql.query(`SELECT count(*)::int AS n FROM outbox WHERE event = 'email.opened' AND data->>'id' = $1`, [d.emailId])).rows[0].n);
    await eventually(opens, (n) => n === answered.length, 10_000);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await opens()).toBe(answered.length);
  });
});
