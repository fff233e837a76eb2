// Listener certificate resolution on a live relay node against the real edge
// (docs/relay-protocol.md, "Certificates"): the node polls
// `GET /relay/v1/certificates` (ETag/304) and picks per handshake, per
// listener: (1) the assigned certificate, (2) ACME for a name in its
// `acme.hosts`, (3) the shared self-signed pair. Certificates and assignments
// are written with SQL here (as the offline `edgemail tls` commands write
// them: the generation triggers fire for any writer). What a client sees is
// read off STARTTLS handshakes: Node's tls always, `openssl s_client
// -starttls smtp -servername` too where openssl is installed.
import { spawn, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog } from '../relay-node/test-support/inbound-harness.js';
import { seal } from '../edge/src/crypto/seal.js';
import { PRIVATE_KEY_CONTEXT } from '../edge/src/services/certificates/self-signed.js';
import { selfSignedPair } from './support/certificate.js';
import { enroll, makeInstallationWide } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';
import { presentedFingerprint } from './support/starttls.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const ACME_HOST = 'mx2.example.net';
// Short enough for a test, long enough to stay well inside the chatter limit beside the heartbeats.
const POLL_MS = 500;

const env = useTenantStack({ keys: { relay: ['relay:write'], reader: ['relay:read'] } });
let dns: TestDnsServer;
const dirs: string[] = [];
/** acme.enabled, acme.hosts = [ACME_HOST], with a submission listener. */
let withAcme: RelayNode;
/** The same bundle, acme off. */
let withoutAcme: RelayNode;
let nodeToken: string;

async function startNode(name: string, env2: Record<string, string>, extra: { submissionPort?: number } = {}) {
  const stateDir = mkdtempSync(join(tmpdir(), 'listener-certs-'));
  dirs.push(stateDir);
  const enrolled = await enrollNode({ edgeUrl: env.stack.url, key: env.keys.relay, name, stateDir });
  await makeInstallationWide(env.stack, enrolled.node_id);
  const node = await startTestNode({
    stack: env.stack, stateDir, dnsAddress: dns.address, log: collectingLog([]), outbound: false, tlsPollIntervalMs: POLL_MS,
    // No ACME order leaves this machine, whatever the node does with acme.enabled.
    env: { SERVICE_ACME_DIRECTORY_URL: 'https://127.0.0.1:9/directory', ...env2 }, ...extra,
  });
  return { node, token: enrolled.token };
}

beforeAll(async () => {
  dns = await startDnsServer();
  const first = await startNode('mx-acme', { SERVICE_ACME_ENABLED: 'true', SERVICE_ACME_HOSTS: ACME_HOST }, { submissionPort: 0 });
  withAcme = first.node;
  nodeToken = first.token;
  withoutAcme = (await startNode('mx-plain', {})).node;
});

afterAll(async () => {
  await withAcme?.stop();
  await withoutAcme?.stop();
  await dns?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The same through `openssl s_client -starttls smtp -servername`, as an operator checks it. */
function presentedOverOpenssl(port: number, servername: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('openssl', ['s_client', '-starttls', 'smtp', '-connect', `127.0.0.1:${port}`, '-servername', servername], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.on('error', reject);
    child.on('close', () => {
      const pem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/.exec(out)?.[0];
      if (!pem) return reject(new Error(`openssl showed no certificate: ${out.slice(0, 500)}`));
      resolve(new X509Certificate(pem).fingerprint256);
    });
    child.stdin.end(); // EOF: s_client closes once the handshake is done
  });
}

const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
const selfSignedFingerprint = async () =>
  fingerprint((await env.stack.sql.query(`SELECT certificate_pem FROM certificates WHERE kind = 'self_signed'`)).rows[0].certificate_pem);

/** A certificate row as the certificate routes store it (private half sealed); its fingerprint. */
async function insertCertificate(name: string, kind: 'issued' | 'acme', hosts: string[]): Promise<string> {
  const pair = selfSignedPair({ hosts, days: 90 });
  await env.stack.sql.query(
    `INSERT INTO certificates (name, kind, certificate_pem, private_key_sealed, hosts, algorithm, key_size, not_before, not_after)
     VALUES ($1, $2, $3, $4, $5, 'ecdsa', 256, $6, $7)`,
    [name, kind, pair.certificate, await seal(pair.privateKey, env.stack.encryptionKey, PRIVATE_KEY_CONTEXT), hosts, pair.notBefore, pair.notAfter]);
  return fingerprint(pair.certificate);
}

const nodeRecords = async () =>
  (await env.stack.call('GET', '/api/v1/relay/nodes', { token: env.keys.reader })).body.relay_nodes as any[];
const generation = async () => Number((await env.stack.sql.query('SELECT generation FROM tls_state')).rows[0].generation);

describe('GET /relay/v1/certificates', () => {
  it('answers the bundle with ETag "<generation>", then 304 with no body while nothing changes, and a new bundle once something does', async () => {
    const first = await fetch(`${env.stack.url}/relay/v1/certificates`, { headers: { authorization: `Bearer ${nodeToken}` } });
    expect(first.status).toBe(200);
    const bundle = await first.json();
    const held = await generation();
    expect(first.headers.get('etag')).toBe(`"${held}"`);
    expect(bundle).toMatchObject({ generation: held, listeners: { inbound: null, submission: null }, acme: {}, self_signed: 'self-signed' });
    expect(Object.keys(bundle.certificates)).toEqual(['self-signed']);
    expect(bundle.certificates['self-signed']).toMatchObject({ kind: 'self_signed', private_key: expect.stringContaining('PRIVATE KEY') });
    expect(fingerprint(bundle.certificates['self-signed'].certificate)).toBe(await selfSignedFingerprint());

    const again = await fetch(`${env.stack.url}/relay/v1/certificates`, { headers: { authorization: `Bearer ${nodeToken}`, 'if-none-match': `"${held}"` } });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(`"${held}"`);
    expect(await again.text()).toBe('');

    // An authority is stored but never handed to nodes: not assigned, not ACME, not self-signed.
    const pair = selfSignedPair({ hosts: ['ca.example.net'] });
    await env.stack.sql.query(
      `INSERT INTO certificates (name, kind, certificate_pem, private_key_sealed, not_after) VALUES ('root', 'authority', $1, $2, $3)`,
      [pair.certificate, await seal(pair.privateKey, env.stack.encryptionKey, PRIVATE_KEY_CONTEXT), pair.notAfter]);
    const changed = await fetch(`${env.stack.url}/relay/v1/certificates`, { headers: { authorization: `Bearer ${nodeToken}`, 'if-none-match': `"${held}"` } });
    expect(changed.status).toBe(200);
    const next = await changed.json();
    expect(next.generation).toBeGreaterThan(held);
    expect(Object.keys(next.certificates)).toEqual(['self-signed']);
    await env.stack.sql.query(`DELETE FROM certificates WHERE name = 'root'`);
  });

  it('is for installation-wide nodes only: 403 for a node a project key enrolled', async () => {
    const scoped = await enroll(env.stack, env.keys.relay);
    const r = await env.stack.call('GET', '/relay/v1/certificates', { token: scoped.token });
    expect(r).toMatchObject({ status: 403, body: { error: 'the shared certificate is served to installation-wide relay nodes only' } });
  });
});

describe('PUT /relay/v1/certificate/self-signed', () => {
  it('the pair a node offered is stored with its metadata columns read from it', async () => {
    const { rows: [row] } = await env.stack.sql.query(`SELECT * FROM certificates WHERE kind = 'self_signed'`);
    const x509 = new X509Certificate(row.certificate_pem);
    expect(row).toMatchObject({
      name: 'self-signed', hosts: ['127.0.0.1', 'localhost'], algorithm: 'ecdsa', key_size: 256,
      fingerprint_sha256: x509.fingerprint256.replaceAll(':', '').toLowerCase(), serial_number: x509.serialNumber.toLowerCase(),
    });
    expect(row.subject).toContain('127.0.0.1');
    expect(row.not_before).toEqual(new Date(x509.validFrom));
  });

  it('a key that does not match the certificate is 400 naming private_key, and nothing changes', async () => {
    const before = await generation();
    const a = selfSignedPair({ hosts: ['localhost'] });
    const b = selfSignedPair({ hosts: ['localhost'] });
    const r = await env.stack.call('PUT', '/relay/v1/certificate/self-signed', { token: nodeToken, body: { certificate: a.certificate, private_key: b.privateKey } });
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^invalid request body: private_key: /);
    expect(Object.keys(r.body.fields)).toEqual(['private_key']);
    expect(await generation()).toBe(before);
  });
});

describe('a live node', () => {
  it('presents the shared self-signed pair on both listeners, with or without SNI', async () => {
    const selfSigned = await selfSignedFingerprint();
    expect(await presentedFingerprint(withAcme.port)).toBe(selfSigned);
    expect(await presentedFingerprint(withAcme.port, 'mx1.example.net')).toBe(selfSigned);
    expect(await presentedFingerprint(withAcme.submissionPort!, 'mx1.example.net')).toBe(selfSigned);
  });

  it.skipIf(!hasOpenssl)('openssl s_client -starttls smtp -servername shows the self-signed pair', async () => {
    expect(await presentedOverOpenssl(withAcme.port, 'mx1.example.net')).toBe(await selfSignedFingerprint());
  });

  it('an assignment to inbound is presented there without a restart (submission keeps the self-signed pair); unassigning falls back', async () => {
    const selfSigned = await selfSignedFingerprint();
    const mx1 = await insertCertificate('mx1', 'issued', ['mx1.example.net']);
    await env.stack.sql.query(`INSERT INTO listener_certificates (listener, certificate_id) SELECT 'inbound', id FROM certificates WHERE name = 'mx1'`);
    // Within the spec's 30 s; the node polls every POLL_MS here.
    await eventually(() => presentedFingerprint(withAcme.port, 'mx1.example.net'), (f) => f === mx1, 30_000);
    expect(await presentedFingerprint(withAcme.port)).toBe(mx1); // no SNI: (1)
    expect(await presentedFingerprint(withAcme.port, ACME_HOST)).toBe(mx1); // (1) before ACME
    expect(await presentedFingerprint(withAcme.submissionPort!, 'mx1.example.net')).toBe(selfSigned);
    await eventually(() => presentedFingerprint(withoutAcme.port, 'mx1.example.net'), (f) => f === mx1, 30_000);
    if (hasOpenssl) expect(await presentedOverOpenssl(withAcme.port, 'mx1.example.net')).toBe(mx1);
    // Nodes older than the bundle ask GET /relay/v1/certificate: the assignment first there too.
    const old = await env.stack.call('GET', '/relay/v1/certificate?listener=inbound&name=mx1.example.net', { token: nodeToken });
    expect(old).toMatchObject({ status: 200, body: { source: 'assigned' } });
    expect(fingerprint(old.body.certificate)).toBe(mx1);
    const submissionOld = await env.stack.call('GET', '/relay/v1/certificate?listener=submission', { token: nodeToken });
    expect(submissionOld.body.source).toBe('self_signed');

    // The heartbeat says what each listener presents.
    const nodes = await eventually(
      nodeRecords,
      (list) => list.some((n) => n.name === 'mx-acme' && n.listeners.some((l: any) => l.certificate?.certificate === 'mx1')),
      10_000,
    );
    const listeners = nodes.find((n) => n.name === 'mx-acme').listeners;
    expect(listeners.find((l: any) => l.name === 'inbound').certificate).toMatchObject({ source: 'assigned', certificate: 'mx1', not_after: expect.any(String) });
    expect(listeners.find((l: any) => l.name === 'submission').certificate).toMatchObject({ source: 'self_signed', certificate: 'self-signed' });

    await env.stack.sql.query(`DELETE FROM listener_certificates WHERE listener = 'inbound'`);
    await eventually(() => presentedFingerprint(withAcme.port, 'mx1.example.net'), (f) => f === selfSigned, 30_000);
    expect(await presentedFingerprint(withAcme.port)).toBe(selfSigned);
  });

  it('an ACME certificate (acme:<host>) answers that SNI name only, and only on a node whose acme settings name it', async () => {
    const selfSigned = await selfSignedFingerprint();
    const acme = await insertCertificate(`acme:${ACME_HOST}`, 'acme', [ACME_HOST]);
    await eventually(() => presentedFingerprint(withAcme.port, ACME_HOST), (f) => f === acme, 30_000);
    expect(await presentedFingerprint(withAcme.submissionPort!, ACME_HOST)).toBe(acme);
    expect(await presentedFingerprint(withAcme.port, 'other.example.net')).toBe(selfSigned);
    expect(await presentedFingerprint(withAcme.port)).toBe(selfSigned); // no SNI: no ACME
    if (hasOpenssl) expect(await presentedOverOpenssl(withAcme.port, ACME_HOST)).toBe(acme);
    // The node without acme.enabled holds the same bundle (its heartbeat names the generation) and still presents the self-signed pair.
    const now = await generation();
    await eventually(nodeRecords, (list) => list.some((n) => n.name === 'mx-plain' && n.tls.generation >= now), 10_000);
    expect(await presentedFingerprint(withoutAcme.port, ACME_HOST)).toBe(selfSigned);
  });
});
