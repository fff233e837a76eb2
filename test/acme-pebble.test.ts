// ACME end to end (docs/acme.md): Pebble (Let's Encrypt's test CA) and
// pebble-challtestsrv (its DNS, answering 127.0.0.1 for every name) on
// loopback, the real edge and two live relay nodes with acme.enabled for
// mx1.example.net. The first node orders over http-01 and the edge stores the
// certificate as `acme:mx1.example.net`, chained to Pebble's intermediate;
// the second node finds it not due and does not order; a STARTTLS handshake
// naming mx1.example.net on the first node presents it. Renewal: with
// not_after moved within 30 days, the second node orders again, and Pebble's
// validation request reaches the FIRST node's responder, which answers from
// the edge (the challenge the second node published there). A failed
// validation is kept for operators and holds the host back.
// Needs the `pebble` and `pebble-challtestsrv` binaries (Debian package
// `pebble`); skipped with a message naming them when they are missing.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { Agent, get as httpsGet } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { accountKeyFile } from '../relay-node/src/tls/acme/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { openRaw } from '../relay-node/test-support/smtp-raw.js';
import { selfSignedPair } from './support/certificate.js';
import { makeInstallationWide } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { useTenantStack } from './support/tenant-stack.js';
import { eventually } from './support/wait.js';

const missing = ['pebble', 'pebble-challtestsrv'].filter((bin) => spawnSync('sh', ['-c', `command -v ${bin}`]).status !== 0);
if (missing.length) console.warn(`test/acme-pebble.test.ts skipped: ${missing.join(' and ')} not installed (Debian package pebble)`);

const HOST = 'mx1.example.net';
const NAME = `acme:${HOST}`;

/** A port free on 127.0.0.1 right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** GET over HTTPS trusting `ca` only: the body, or null while the server is not up. */
function fetchTrusting(url: string, ca: string): Promise<string | null> {
  return new Promise((resolve) => {
    const req = httpsGet(url, { agent: new Agent({ ca }), timeout: 2000 }, (res) => {
      let body = '';
      res.on('data', (c) => { body += c; });
      res.on('end', () => resolve(res.statusCode === 200 ? body : null));
    });
    req.on('error', () => resolve(null));
    req.on('timeout', () => req.destroy());
  });
}

describe.skipIf(missing.length > 0)('ACME with Pebble', () => {
  const env = useTenantStack({
    settings: { SERVICE_ACME_ENABLED: 'true', SERVICE_ACME_HOSTS: HOST },
    keys: { relay: ['relay:write'] },
  });
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const logs: LogLine[] = [];
  let dns: TestDnsServer;
  let pebbleTls: { certificate: string; privateKey: string };
  let directoryUrl: string;
  let managementUrl: string;
  let caFile: string;
  let httpPort: number;
  let first: RelayNode;
  let second: RelayNode;

  function run(bin: string, args: string[], extraEnv: Record<string, string> = {}): void {
    const child = spawn(bin, args, { env: { ...process.env, ...extraEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer) => { output = (output + chunk.toString()).slice(-4000); };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.on('exit', (code) => { if (code) console.warn(`${bin} exited ${code}: ${output}`); });
    children.push(child);
  }

  async function startNode(name: string): Promise<RelayNode> {
    const stateDir = mkdtempSync(join(tmpdir(), 'acme-pebble-node-'));
    dirs.push(stateDir);
    const enrolled = await enrollNode({ edgeUrl: env.stack.url, key: env.keys.relay, name, stateDir });
    await makeInstallationWide(env.stack, enrolled.node_id);
    return startTestNode({
      stack: env.stack, stateDir, dnsAddress: dns.address, log: collectingLog(logs), outbound: false, tlsPollIntervalMs: 500,
      env: {
        SERVICE_ACME_ENABLED: 'true', SERVICE_ACME_HOSTS: HOST, SERVICE_ACME_DIRECTORY_URL: directoryUrl,
        SERVICE_ACME_DIRECTORY_CA_FILE: caFile, SERVICE_ACME_EMAIL: 'postmaster@example.net', SERVICE_ACME_HTTP_PORT: String(httpPort),
      },
      // The first node's responder takes Pebble's httpPort; the second's a free port (Pebble never reaches it).
      acme: { httpPort: name === 'mx-first' ? httpPort : 0, pollMinMs: 200 },
    });
  }

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'acme-pebble-'));
    dirs.push(dir);
    pebbleTls = selfSignedPair({ hosts: ['localhost'], days: 7 });
    caFile = join(dir, 'pebble-tls.pem');
    writeFileSync(caFile, pebbleTls.certificate);
    writeFileSync(join(dir, 'pebble-tls.key'), pebbleTls.privateKey);
    const [listen, management, dnsPort, challtestManagement, tlsPort] = await Promise.all([freePort(), freePort(), freePort(), freePort(), freePort()]);
    httpPort = await freePort();
    directoryUrl = `https://localhost:${listen}/dir`;
    managementUrl = `https://localhost:${management}`;
    writeFileSync(join(dir, 'pebble.json'), JSON.stringify({
      pebble: {
        listenAddress: `127.0.0.1:${listen}`, managementListenAddress: `127.0.0.1:${management}`,
        certificate: join(dir, 'pebble-tls.pem'), privateKey: join(dir, 'pebble-tls.key'),
        httpPort, tlsPort, ocspResponderURL: '', externalAccountBindingRequired: false,
      },
    }));
    // Every name resolves to 127.0.0.1 (no AAAA: the responder listens on IPv4); its other listeners off.
    run('pebble-challtestsrv', ['-defaultIPv4', '127.0.0.1', '-defaultIPv6', '', '-dns01', `127.0.0.1:${dnsPort}`,
      '-http01', '', '-https01', '', '-tlsalpn01', '', '-management', `127.0.0.1:${challtestManagement}`]);
    run('pebble', ['-config', join(dir, 'pebble.json'), '-dnsserver', `127.0.0.1:${dnsPort}`], { PEBBLE_VA_NOSLEEP: '1', PEBBLE_WFE_NONCEREJECT: '0', PEBBLE_AUTHZREUSE: '0' });
    await eventually(() => fetchTrusting(directoryUrl, pebbleTls.certificate), (body) => body !== null, 15_000);
    dns = await startDnsServer();
  }, 30_000);

  afterAll(async () => {
    await first?.stop();
    await second?.stop();
    await dns?.close();
    for (const child of children) child.kill();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const stored = async () => (await env.stack.sql.query('SELECT * FROM certificates WHERE name = $1', [NAME])).rows[0];

  it('the first node orders; the edge stores acme:mx1.example.net chained to Pebble\'s intermediate; STARTTLS with SNI presents it', async () => {
    first = await startNode('mx-first');
    // The node checks at start: lease, order, challenge answered, certificate stored.
    const row = await eventually(stored, (r) => r !== undefined, 30_000);
    expect(row).toMatchObject({ kind: 'acme', hosts: [HOST], algorithm: 'ecdsa', key_size: 256 });
    const leaf = new X509Certificate(row.certificate_pem);
    expect(leaf.subjectAltName).toBe(`DNS:${HOST}`);
    expect(row.fingerprint_sha256).toBe(leaf.fingerprint256.replace(/:/g, '').toLowerCase());
    expect(new Date(leaf.validTo).getTime()).toBeGreaterThan(Date.now() + 30 * 86_400_000);

    // The chain is Pebble's intermediate (its management API serves it), and it signed the leaf.
    const intermediate = new X509Certificate((await fetchTrusting(`${managementUrl}/intermediates/0`, pebbleTls.certificate))!);
    const chain = new X509Certificate(row.chain_pem);
    expect(chain.fingerprint256).toBe(intermediate.fingerprint256);
    expect(leaf.checkIssued(intermediate)).toBe(true);
    expect(leaf.verify(intermediate.publicKey)).toBe(true);
    expect(row.private_key_sealed).not.toContain('PRIVATE KEY');

    // The lease is released without an error; the challenge is gone; the node's account key is its own, 0600.
    expect((await env.stack.sql.query('SELECT last_error, expires_at <= now() AS released FROM acme_leases WHERE host = $1', [HOST])).rows).toEqual([{ last_error: null, released: true }]);
    expect((await env.stack.sql.query('SELECT count(*)::int AS n FROM acme_challenges')).rows).toEqual([{ n: 0 }]);
    expect(statSync(accountKeyFile(dirs.at(-1)!)).mode & 0o777).toBe(0o600);
    expect(logs.filter((l) => l.message === 'acme: certificate stored').map((l) => l.fields?.name)).toEqual([NAME]);

    // Picked up by the node's certificate poll: STARTTLS naming the host presents the ACME certificate.
    const presented = async () => {
      const smtp = await openRaw(first.port);
      try {
        await smtp.reply();
        await smtp.command('EHLO probe.test');
        expect(await smtp.command('STARTTLS')).toMatch(/^220 /);
        await smtp.startTls(HOST);
        return smtp.peerCertificate()!.fingerprint256;
      } finally {
        smtp.close();
      }
    };
    await eventually(presented, (f) => f === leaf.fingerprint256, 10_000);
  });

  it('a second node does not order again: the stored certificate is not due', async () => {
    second = await startNode('mx-second');
    expect(await second.acme!.manager.checkNow()).toEqual({ [HOST]: 'not_due' });
    expect(logs.filter((l) => l.message === 'acme: ordering a certificate')).toHaveLength(1);
  });

  it('renewal: within 30 days of its end the host is ordered again, the challenge answered by the other node from the edge', async () => {
    const before = await stored();
    await env.stack.sql.query(`UPDATE certificates SET not_after = now() + interval '20 days' WHERE name = $1`, [NAME]);
    const answeredFromEdge = () => logs.filter((l) => l.message === 'acme challenge answered from the edge (another node is ordering)').length;
    expect(answeredFromEdge()).toBe(0);
    expect(await second.acme!.manager.checkNow()).toEqual({ [HOST]: 'stored' });
    expect(answeredFromEdge()).toBeGreaterThan(0);
    const after = await stored();
    expect(after.fingerprint_sha256).not.toBe(before.fingerprint_sha256);
    expect(new Date(after.not_after).getTime()).toBeGreaterThan(Date.now() + 30 * 86_400_000);
    expect(after.id).toBe(before.id);
    // And it is not ordered a third time.
    expect(await first.acme!.manager.checkNow()).toEqual({ [HOST]: 'not_due' });
  });

  it('a failed validation: the CA\'s detail in the node\'s log and in acme_leases.last_error, the host held an hour', async () => {
    await env.stack.sql.query(`UPDATE certificates SET not_after = now() + interval '20 days' WHERE name = $1`, [NAME]);
    // Nothing answers on Pebble's httpPort any more: the first node's responder is the one it reaches.
    await first.acme!.stop();
    expect(await second.acme!.manager.checkNow()).toEqual({ [HOST]: 'failed' });
    const failed = logs.filter((l) => l.message === 'acme: order failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]!.fields).toMatchObject({ host: HOST, failures: 1, error: expect.stringMatching(/^Get "http:\/\/mx1\.example\.net:\d+\/\.well-known\/acme-challenge\/[\w-]+": .*connection refused$/) });
    const [lease] = (await env.stack.sql.query(`SELECT last_error, expires_at > now() + interval '59 minutes' AS held FROM acme_leases WHERE host = $1`, [HOST])).rows;
    expect(lease).toEqual({ last_error: failed[0]!.fields!.error, held: true });
    expect((await env.stack.sql.query('SELECT count(*)::int AS n FROM acme_challenges')).rows).toEqual([{ n: 0 }]);
    // The failed node waits before it asks again (and the edge holds the host for every node: test/acme-relay.test.ts).
    expect(await second.acme!.manager.checkNow()).toEqual({ [HOST]: 'backing_off' });
  });
});
