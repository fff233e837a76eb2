// `pnpm dev`'s local DNS as ordinary DNS, and the dev node on it (issue 26,
// items 5 and 6): a message signed for the stack's own verified domain used to
// get `dkim=neutral (no key)`, `spf=none`, because the relay node asked the
// system's DNS while domain verification asked the local one. Now the local
// DNS also answers plain DNS on EDGEMAIL_DNS_PORT and the node resolves
// through it. And changing EDGEMAIL_PORT between runs used to enrol the dev
// node again, leaving the old node record live beside the new one.
import { execFile } from 'node:child_process';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, expect, test } from 'vitest';
import { freePort } from './support/global-setup.js';
import { reachableByPostgres } from '../edge/local/postgres.js';
import { loadOrCreateCredentials, pgUrl } from '../edge/local/pg-credentials.js';
import { sendMessage } from '../relay-node/test-support/smtp-client.js';
import { eventually } from './support/wait.js';
import { apiCaller, killGroup, ROOT, startPnpmDev, type PnpmDev } from './support/pnpm-dev.js';

const DOMAIN = 'dev-dns.test';
const dataDir = mkdtempSync(`${ROOT}.data/dev-dns-`);
const started: PnpmDev[] = [];
afterAll(async () => {
  for (const dev of started) killGroup(dev.child);
  await new Promise((r) => setTimeout(r, 3000));
  if (process.getuid?.() === 0) rmSync(reachableByPostgres(`${dataDir}/pg`), { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

async function ctrlC(dev: PnpmDev): Promise<void> {
  const closed = new Promise<void>((resolve) => dev.child.on('close', () => resolve()));
  process.kill(-dev.child.pid!, 'SIGINT');
  await closed;
}

const nodeState = () => JSON.parse(readFileSync(`${dataDir}/relay-node/node.json`, 'utf8')) as { node_id: string; edge_url: string };

test('the dev node keeps its enrolment across a port change, and checks inbound mail against the local DNS', async () => {
  const [pgPort, bridgePort, inboundPort, dnsPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const env = (workerPort: number) => ({
    EDGEMAIL_DATA_DIR: dataDir, EDGEMAIL_PG_PORT: String(pgPort), EDGEMAIL_BRIDGE_PORT: String(bridgePort), EDGEMAIL_PORT: String(workerPort),
    EDGEMAIL_INBOUND_PORT: String(inboundPort), EDGEMAIL_SUBMISSION_PORT: '0', EDGEMAIL_DNS_PORT: String(dnsPort),
  });

  // 1. A first run on one Worker port: a user, a project, a verified domain.
  const firstPort = await freePort();
  const first = await startPnpmDev(env(firstPort), { silent: true });
  started.push(first);
  expect(first.output()).toContain(`ordinary DNS (UDP and TCP) on 127.0.0.1:${dnsPort}`);
  const enrolled = nodeState();
  expect(enrolled.edge_url).toBe(`http://127.0.0.1:${firstPort}`);
  const { stdout } = await promisify(execFile)('pnpm', ['-s', 'edgemail', 'admin', 'create-credential', '--name', 'ops'], { cwd: ROOT, env: { ...process.env, EDGEMAIL_DATA_DIR: dataDir } });
  const admin = stdout.trim();
  await ctrlC(first);

  // 2. The next run on another Worker port: the same node, pointed at the new URL, and one live record.
  const workerPort = await freePort();
  const url = `http://127.0.0.1:${workerPort}`;
  const second = await startPnpmDev(env(workerPort), { silent: true });
  started.push(second);
  expect(nodeState()).toEqual({ ...enrolled, edge_url: url });
  expect(second.output()).not.toMatch(/enrolling it again|relay node enrolled as/);
  const db = new pg.Client({ connectionString: pgUrl(loadOrCreateCredentials(`${dataDir}/pg-credentials.json`).app, pgPort, 'edgemail') });
  await db.connect();
  try {
    const { rows } = await db.query<{ id: string; revoked: boolean }>("SELECT id, revoked FROM relay_nodes WHERE name = 'local'");
    expect(rows).toEqual([{ id: enrolled.node_id, revoked: false }]);
  } finally {
    await db.end();
  }

  const call = apiCaller(url);
  const { body: { user } } = await call('POST', '/api/v1/admin/users', admin, { email: 'dev-dns@example.com' });
  const { body: { project } } = await call('POST', '/api/v1/admin/projects', admin, { name: 'dev-dns', owner_id: user.id });
  const { body: { token } } = await call('POST', '/api/v1/api-keys', admin,
    { name: 'dns', permissions: ['domains:write', 'domains:read', 'emails:write', 'emails:read', 'inbound:read'] }, project.id);
  const { body: { domain } } = await call('POST', '/api/v1/domains', token, { name: DOMAIN });
  const verified = await call('POST', `/api/v1/domains/${domain.id}/verify`, token);
  expect(verified.body.domain.status).toBe('verified');
  const dkim = (verified.body.domain.dns_records as { purpose: string; name: string; value: string }[]).find((r) => r.purpose === 'dkim')!;

  // 3. dig-style: the documented port answers the domain's records as ordinary DNS.
  const resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([`127.0.0.1:${dnsPort}`]);
  expect((await resolver.resolveTxt(DOMAIN)).map((parts) => parts.join(''))).toEqual(['v=spf1 ip4:127.0.0.1 ~all']);
  expect((await resolver.resolveTxt(dkim.name)).map((parts) => parts.join(''))).toEqual([dkim.value]);
  await expect(resolver.resolveTxt('unknown.test')).rejects.toMatchObject({ code: 'ENOTFOUND' });

  // 4. A message signed with the domain's key (the stack's own send, captured), handed to the inbound port.
  const sent = await call('POST', '/api/v1/emails/send', token, { from: `hello@${DOMAIN}`, to: [`inbox@${DOMAIN}`], subject: 'signed here', text: 'Hello.' });
  expect(sent.status).toBe(201);
  const eml = `${dataDir}/outbound-capture/${sent.body.emails[0].id}.eml`;
  const message = await eventually(async () => { try { return readFileSync(eml, 'utf8'); } catch { return ''; } }, (b) => b !== '', 15_000);
  expect(message).toMatch(new RegExp(`^DKIM-Signature: .*d=${DOMAIN.replace('.', '\\.')}`, 'm'));
  const delivered = await sendMessage({ port: inboundPort, from: `hello@${DOMAIN}`, to: `inbox@${DOMAIN}`, message });
  expect(delivered.response, JSON.stringify(delivered.error)).toMatch(/^250 /);
  const inbound = await eventually(async () => (await call('GET', '/api/v1/inbound-emails', token)).body.inbound_emails?.find((r: any) => r.subject === 'signed here'),
    (r) => r !== undefined, 20_000);
  expect(inbound.auth).toMatchObject({ dkim: 'pass', spf: 'pass', dmarc: 'pass', aligned: true });
  await ctrlC(second);
}, 240_000);
