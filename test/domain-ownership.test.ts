// Issue 13 item 2: a domain's mail goes to the project that proved it owns the
// name in DNS (its own DKIM key published), never to whoever registered it
// first. Through the real edge (workerd, PostgreSQL), its DoH lookups against
// a responder on loopback, and a real relay node taking mail over SMTP.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { startDohResponder, type DohResponder } from './support/doh-responder.js';
import { forward, inboundMeta, makeInstallationWide } from './support/relay.js';
import { inboundRecords, startTestNode } from './support/relay-node.js';
import { seedProject } from './support/stack.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';

const PUBLIC_HOST = 'mx.edgemail.test';
const NAME = 'x.test';
const MAX_PER_PROJECT = 3;

let doh: DohResponder;
const settings: Record<string, string> = {
  SERVICE_SERVER_PUBLIC_URL: `https://${PUBLIC_HOST}`,
  SERVICE_DOMAINS_MAX_PER_PROJECT: String(MAX_PER_PROJECT),
};
beforeAll(async () => {
  doh = await startDohResponder();
  settings.SERVICE_DNS_DOH_URL = doh.url;
});
afterAll(async () => { await doh?.close(); });

const env = useTenantStack({ settings, keys: { a: ['domains:write', 'domains:read', 'inbound:read', 'relay:write'] } });

type Rec = { purpose: string; name: string; value: string };
let b: string;
let c: string;
let node: RelayNode;
let nodeToken: string;
let dns: TestDnsServer;
let stateDir: string;
const logs: LogLine[] = [];

beforeAll(async () => {
  b = (await env.other.key(['domains:write', 'domains:read', 'inbound:read'])).token;
  c = (await (await seedProject(env.stack, env.admin, 'initech')).key(['domains:write', 'domains:read', 'inbound:read'])).token;
  dns = await startDnsServer(); // the node's verdict lookups: NXDOMAIN at once
  stateDir = mkdtempSync(join(tmpdir(), 'relay-ownership-'));
  const enrolled = await enrollNode({ edgeUrl: env.stack.url, key: env.keys.a, name: 'mx-ownership', stateDir });
  // The operator's MX: it serves every project's proven domains.
  await makeInstallationWide(env.stack, enrolled.node_id);
  nodeToken = enrolled.token;
  node = await startTestNode({ stack: env.stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), hostName: 'mx.ownership.test' });
});
afterAll(async () => {
  await node?.stop();
  await dns?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

const register = (token: string, name = NAME) => env.stack.call('POST', '/api/v1/domains', { token, body: { name } });
const verify = (token: string, id: string) => env.stack.call('POST', `/api/v1/domains/${id}/verify`, { token });
const get = async (token: string, id: string) => (await env.stack.call('GET', `/api/v1/domains/${id}`, { token })).body.domain;
const record = (domain: { dns_records: Rec[] }, purpose: string) => domain.dns_records.find((r) => r.purpose === purpose)!;
/** Publishes the registration's DKIM key (and SPF) in DNS, replacing whatever was at those names. */
const publish = (domain: { name: string; dns_records: Rec[] }) => {
  doh.set(record(domain, 'dkim').name, 'TXT', [record(domain, 'dkim').value]);
  doh.set(domain.name, 'TXT', [record(domain, 'spf').value]);
};
const storedFor = async (project: string) =>
  Number((await env.stack.sql.query('SELECT count(*) FROM inbound_emails WHERE project_id = $1', [project])).rows[0].count);
const smtp = (subject: string, to = `info@${NAME}`) => sendMessage({
  port: node.port, from: 'ann@sender.example', to,
  message: `From: <ann@sender.example>\r\nTo: <${to}>\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@sender.example>\r\n\r\nFor ${to}.\r\n`,
});
/** SMTP until the node has the edge's new list (a heartbeat brings its version at most 300 ms later). */
const smtpUntil = (subject: string, reply: RegExp) =>
  eventually(() => smtp(subject), (r) => reply.test(r.response ?? r.error?.response ?? ''), 10_000);
const subjects = async (token: string) => (await inboundRecords(env.stack, token)).map((r) => r.subject);

describe('project A registers x.test without proof; project B proves it', () => {
  let aDomain: any;
  let bDomain: any;

  test('an unproven registration: 550 5.1.1 at RCPT, and nothing stored', async () => {
    const created = await register(env.keys.a);
    expect(created.status).toBe(201);
    aDomain = created.body.domain;
    expect(aDomain).toMatchObject({ name: NAME, status: 'pending', status_reason: null, ownership_proven_at: null });
    // A checks without having published anything: still unproven.
    expect((await verify(env.keys.a, aDomain.id)).body.domain).toMatchObject({ status: 'pending', ownership_proven_at: null });

    const refused = await smtp('unproven');
    expect(refused.error).toMatchObject({ responseCode: 550, command: 'RCPT TO' });
    expect(refused.error!.response).toBe(`550 5.1.1 <info@${NAME}>: recipient domain ${NAME} is not served here`);
    expect(await storedFor(env.tenant.project.id)).toBe(0);
    // The edge lists nothing for the node to accept.
    expect((await env.stack.call('GET', '/relay/v1/domains', { token: nodeToken })).body.domains).not.toContain(NAME);
  });

  test('ingest refuses it too: a node that forwards mail for the unproven name stores nothing for A', async () => {
    const reply = await forward(env.stack, nodeToken, { meta: inboundMeta([`info@${NAME}`]), raw: 'Subject: forwarded anyway\r\n\r\nHi\r\n' });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ inbound_emails: [] });
    expect(await storedFor(env.tenant.project.id)).toBe(0);
    expect(await subjects(env.keys.a)).toEqual([]);
  });

  test('B registers the same name (A\'s unproven registration does not block it), publishes its key and verifies: B owns it', async () => {
    const created = await register(b);
    expect(created.status).toBe(201);
    bDomain = created.body.domain;
    expect(record(bDomain, 'dkim').value).not.toBe(record(aDomain, 'dkim').value); // a key of its own
    publish(bDomain);
    const verified = await verify(b, bDomain.id);
    expect(verified.status).toBe(200);
    expect(verified.body.domain).toMatchObject({ status: 'verified', status_reason: null });
    expect(Date.now() - Date.parse(verified.body.domain.ownership_proven_at)).toBeLessThan(60_000);
  });

  test('A\'s record says why; A cannot get it verified with B\'s record in DNS', async () => {
    const a = await get(env.keys.a, aDomain.id);
    expect(a).toMatchObject({ status: 'failed', status_reason: `ownership of ${NAME} was proven by another project`, ownership_proven_at: null });
    const again = await verify(env.keys.a, aDomain.id);
    expect(again.body.domain).toMatchObject({ status: 'failed', status_reason: `ownership of ${NAME} was proven by another project`, ownership_proven_at: null });
    expect(record(again.body.domain, 'dkim')).toMatchObject({ status: 'mismatch' });
  });

  test('registering a name another project proved is 409 with a clear message; the same name twice in a project is 409', async () => {
    const before = Number((await env.stack.sql.query('SELECT count(*) FROM domains WHERE name = $1', [NAME])).rows[0].count);
    expect(await register(c)).toMatchObject({ status: 409, body: { error: `domain ${NAME} is already registered by another project that proved its ownership` } });
    expect(await register(env.keys.a)).toMatchObject({ status: 409, body: { error: `domain ${NAME} is already registered in this project` } });
    expect(await register(b)).toMatchObject({ status: 409, body: { error: `domain ${NAME} is already registered in this project` } });
    expect(Number((await env.stack.sql.query('SELECT count(*) FROM domains WHERE name = $1', [NAME])).rows[0].count)).toBe(before);
  });

  test('mail to x.test over SMTP to the node lands in B only', async () => {
    const accepted = await smtpUntil('for-the-owner', /^250 /);
    expect(accepted.response).toMatch(/^250 /);
    const inB = await eventually(() => subjects(b), (s) => s.includes('for-the-owner'), 10_000);
    expect(inB).toEqual(['for-the-owner']);
    expect(await subjects(env.keys.a)).toEqual([]);
    expect(await storedFor(env.tenant.project.id)).toBe(0);
  });

  test('ownership is sticky: B\'s record lost at re-verification, B is failed naming it, and its mail still arrives', async () => {
    const dkimName = record(bDomain, 'dkim').name;
    doh.set(dkimName, 'TXT', 'nxdomain');
    const lost = (await verify(b, bDomain.id)).body.domain;
    expect(lost).toMatchObject({
      status: 'failed', status_reason: `DKIM record ${dkimName} is missing`, verified_at: null,
      ownership_proven_at: (await get(b, bDomain.id)).ownership_proven_at,
    });
    expect(lost.ownership_proven_at).not.toBeNull();
    expect((await smtp('while-lapsed')).response).toMatch(/^250 /);
    await eventually(() => subjects(b), (s) => s.includes('while-lapsed'), 10_000);
    // A lapsed owner no longer blocks a registration.
    const third = await register(c);
    expect(third.status).toBe(201);
    expect(third.body.domain).toMatchObject({ status: 'failed', status_reason: `ownership of ${NAME} was proven by another project` });
  });

  test('whoever controls the DNS now takes it over by proving it: A publishes its key, verifies, and the mail moves to A', async () => {
    publish(aDomain);
    const taken = (await verify(env.keys.a, aDomain.id)).body.domain;
    expect(taken).toMatchObject({ status: 'verified', status_reason: null });
    expect(taken.ownership_proven_at).not.toBeNull();
    expect(await get(b, bDomain.id)).toMatchObject({ status: 'failed', status_reason: `ownership of ${NAME} was proven by another project`, ownership_proven_at: null });

    await smtpUntil('after-takeover', /^250 /);
    await eventually(() => subjects(env.keys.a), (s) => s.includes('after-takeover'), 10_000);
    expect(await subjects(b)).not.toContain('after-takeover');
  });
});

test('two projects proving one name at the same moment: exactly one owns it, the other is told', async () => {
  const name = `race-${crypto.randomUUID().slice(0, 8)}.test`;
  const [mine, theirs] = [(await register(env.keys.a, name)).body.domain, (await register(b, name)).body.domain];
  // The DNS holds both keys (the same selector name, two TXT values): both checks find their own.
  doh.set(record(mine, 'dkim').name, 'TXT', [record(mine, 'dkim').value, record(theirs, 'dkim').value]);
  doh.set(name, 'TXT', [record(mine, 'spf').value]);
  const answers = await Promise.all([verify(env.keys.a, mine.id), verify(b, theirs.id)]);
  expect(answers.map((r) => r.status)).toEqual([200, 200]);
  const owners = answers.filter((r) => r.body.domain.ownership_proven_at !== null);
  expect(owners).toHaveLength(1);
  expect(owners[0]!.body.domain.status).toBe('verified');
  const loser = answers.find((r) => r.body.domain.ownership_proven_at === null)!.body.domain;
  const token = loser.id === mine.id ? env.keys.a : b;
  expect(await get(token, loser.id)).toMatchObject({ status: 'failed', status_reason: `ownership of ${name} was proven by another project`, verified_at: null });
  expect(Number((await env.stack.sql.query('SELECT count(*) FROM domains WHERE name = $1 AND ownership_proven_at IS NOT NULL', [name])).rows[0].count)).toBe(1);
});

describe('takeover at the new owner\'s check: the holder\'s record is asked right then', () => {
  const newProject = async (name: string) => (await (await seedProject(env.stack, env.admin, name)).key(['domains:write', 'domains:read'])).token;
  const owners = async (name: string) =>
    (await env.stack.sql.query('SELECT id FROM domains WHERE name = $1 AND ownership_proven_at IS NOT NULL', [name])).rows.map((r) => r.id);

  test('the holder\'s record still published: the claimant stays failed; gone (the holder not re-checked since): the claimant takes the name at once', async () => {
    const name = `moved-${crypto.randomUUID().slice(0, 8)}.test`;
    const [oldToken, newToken] = [await newProject('old-owner'), await newProject('new-owner')];
    const old = (await register(oldToken, name)).body.domain;
    const claimant = (await register(newToken, name)).body.domain;
    const dkimName = record(old, 'dkim').name;
    expect(record(claimant, 'dkim').name).toBe(dkimName); // one selector name: the two keys are two TXT values there
    publish(old);
    expect((await verify(oldToken, old.id)).body.domain).toMatchObject({ status: 'verified' });

    // Both keys published: the holder's record stands, so the claimant's own key takes nothing.
    doh.set(dkimName, 'TXT', [record(old, 'dkim').value, record(claimant, 'dkim').value]);
    expect((await verify(newToken, claimant.id)).body.domain).toMatchObject({
      status: 'failed', status_reason: `ownership of ${name} was proven by another project`, ownership_proven_at: null,
    });
    expect(await get(oldToken, old.id)).toMatchObject({ status: 'verified', ownership_proven_at: expect.any(String) });
    expect(await owners(name)).toEqual([old.id]);

    // The name changed hands: only the new key is in DNS. The old owner's last check still says found.
    doh.set(dkimName, 'TXT', [record(claimant, 'dkim').value]);
    const taken = (await verify(newToken, claimant.id)).body.domain;
    expect(taken).toMatchObject({ status: 'verified', status_reason: null });
    expect(taken.ownership_proven_at).not.toBeNull();
    expect(await get(oldToken, old.id)).toMatchObject({
      status: 'failed', status_reason: `ownership of ${name} was proven by another project`, ownership_proven_at: null, verified_at: null,
    });
    expect(await owners(name)).toEqual([claimant.id]);
    expect((await env.stack.call('GET', '/relay/v1/domains', { token: nodeToken })).body.domains).toContain(name);
  });

  test('a holder kept by migration 0007 with no key blocks no registration, and the first project to prove the name takes it', async () => {
    const name = `legacy-${crypto.randomUUID().slice(0, 8)}.test`;
    const [legacyToken, newToken] = [await newProject('legacy-owner'), await newProject('rightful-owner')];
    const legacy = (await register(legacyToken, name)).body.domain;
    // As the upgrade leaves a registration made before sending existed: owner, no key, never checked.
    await env.stack.sql.query(`UPDATE domains SET dkim_selector = NULL, dkim_algorithm = NULL, dkim_public_key = NULL,
      dkim_private_key_sealed = NULL, verification = NULL, ownership_proven_at = now() WHERE id = $1`, [legacy.id]);
    const created = await register(newToken, name);
    expect(created.status).toBe(201);
    publish(created.body.domain);
    expect((await verify(newToken, created.body.domain.id)).body.domain).toMatchObject({ status: 'verified', status_reason: null });
    expect(await get(legacyToken, legacy.id)).toMatchObject({ status: 'failed', status_reason: `ownership of ${name} was proven by another project`, ownership_proven_at: null });
    expect(await owners(name)).toEqual([created.body.domain.id]);
  });
});

describe('domains.max_per_project', () => {
  test(`one more than ${MAX_PER_PROJECT} is 400 naming the limit, also when registrations race; nothing more is stored`, async () => {
    const limited = await seedProject(env.stack, env.admin, 'limited');
    const { token } = await limited.key(['domains:write']);
    const names = Array.from({ length: MAX_PER_PROJECT + 2 }, (_, i) => `n${i}-${crypto.randomUUID().slice(0, 8)}.test`);
    const replies = await Promise.all(names.map((name) => register(token, name)));
    expect(replies.map((r) => r.status).sort()).toEqual([...Array(MAX_PER_PROJECT).fill(201), 400, 400]);
    for (const r of replies.filter((x) => x.status === 400)) {
      expect(r.body).toEqual({ error: `domain limit reached: a project may register ${MAX_PER_PROJECT} domains (domains.max_per_project)` });
    }
    const count = async () => Number((await env.stack.sql.query('SELECT count(*) FROM domains WHERE project_id = $1', [limited.project.id])).rows[0].count);
    expect(await count()).toBe(MAX_PER_PROJECT);
    // Deleting one frees a place.
    const first = replies.find((r) => r.status === 201)!.body.domain;
    expect((await env.stack.call('DELETE', `/api/v1/domains/${first.id}`, { token: (await limited.key(['domains:delete'])).token })).status).toBe(204);
    expect((await register(token, `again-${crypto.randomUUID().slice(0, 8)}.test`)).status).toBe(201);
    expect(await count()).toBe(MAX_PER_PROJECT);
  });
});
