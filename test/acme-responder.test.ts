// The http-01 responder of a live relay node (docs/acme.md, "Port 80 and
// http-01"), as the Internet meets it: a token it did not publish is looked up
// at the real edge, where another node published it. One client address
// spraying made-up tokens spends its own budget of edge lookups
// (`acme.edge_lookups_per_client_per_minute`) and no more, so the 20 lookups
// a minute the node makes in all are left for the CA: its request from
// another address still gets the answer. Client addresses are loopback
// addresses of their own (127.0.0.2, 127.0.0.3), the node listening on 127.0.0.1.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { enrollNode, type RelayNode } from '../relay-node/src/index.js';
import { startDnsServer, type TestDnsServer } from '../relay-node/test-support/dns-server.js';
import { collectingLog, type LogLine } from '../relay-node/test-support/inbound-harness.js';
import { enroll, makeInstallationWide, type EnrolledNode } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { useTenantStack } from './support/tenant-stack.js';
import { awayFromWindowEdge } from './support/wait.js';

const HOST = 'mx1.example.net';
const PER_CLIENT = 5;
const env = useTenantStack({
  settings: { SERVICE_ACME_ENABLED: 'true', SERVICE_ACME_HOSTS: HOST, SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000' },
  keys: { relay: ['relay:write'] },
});
const logs: LogLine[] = [];
let dns: TestDnsServer;
let dir: string;
let node: RelayNode;
let orderer: EnrolledNode;

beforeAll(async () => {
  dns = await startDnsServer();
  dir = mkdtempSync(join(tmpdir(), 'acme-responder-'));
  const enrolled = await enrollNode({ edgeUrl: env.stack.url, key: env.keys.relay, name: 'mx-responder', stateDir: dir });
  await makeInstallationWide(env.stack, enrolled.node_id);
  // ACME on, but no host of its own to order: it only answers for others.
  node = await startTestNode({
    stack: env.stack, stateDir: dir, dnsAddress: dns.address, log: collectingLog(logs), outbound: false,
    env: { SERVICE_ACME_ENABLED: 'true', SERVICE_ACME_EDGE_LOOKUPS_PER_CLIENT_PER_MINUTE: String(PER_CLIENT) },
  });
  // The node ordering the host, through the edge's API: it holds the lease and publishes its challenge there.
  orderer = await enroll(env.stack, env.keys.relay, 'mx-orderer');
  await makeInstallationWide(env.stack, orderer.id);
});

afterAll(async () => {
  await node?.stop();
  await dns?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** GET of a challenge path on the node's responder, from the loopback address `from`. */
function challenge(token: string, from: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: node.acme!.httpPort, path: `/.well-known/acme-challenge/${token}`, localAddress: from }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode!, text }));
    });
    req.on('error', reject);
    req.end();
  });
}

const madeUp = () => randomBytes(32).toString('base64url');

describe('edge lookups are budgeted per client address', () => {
  test('a client spraying made-up tokens is cut off at its budget; the CA\'s request from another address is still answered from the edge', async () => {
    const token = madeUp();
    const keyAuthorization = `${token}.thumbprint`;
    const lease = await env.stack.call('POST', '/relay/v1/acme/leases', { token: orderer.token, body: { host: HOST } });
    expect(lease.body).toMatchObject({ granted: true });
    const published = await env.stack.call('PUT', '/relay/v1/acme/challenges', { token: orderer.token, body: { token, key_authorization: keyAuthorization, host: HOST } });
    expect(published.status).toBe(200);

    // All within one minute's window: the budgets are per minute.
    await awayFromWindowEdge(20_000);
    // More than the node's 20 lookups a minute in all: before the per-client budget this used up the node's allowance.
    for (let i = 0; i < 25; i++) expect((await challenge(madeUp(), '127.0.0.2')).status).toBe(404);
    // The sprayer is over its budget: even a real token is not looked up for it.
    expect(await challenge(token, '127.0.0.2')).toEqual({ status: 404, text: 'not found\n' });
    // The CA, from another address, gets the answer the other node published at the edge.
    expect(await challenge(token, '127.0.0.3')).toEqual({ status: 200, text: keyAuthorization });
    // Now known to the node, it is answered to anyone without a lookup.
    expect(await challenge(token, '127.0.0.2')).toEqual({ status: 200, text: keyAuthorization });

    expect(logs.filter((l) => l.message.startsWith('acme challenge lookups at the edge: a client over its budget')))
      .toMatchObject([{ level: 'warn', fields: { client: '127.0.0.2', per_client_per_minute: PER_CLIENT } }]);
    expect(logs.filter((l) => l.message.startsWith('acme challenge lookups at the edge rate-limited'))).toEqual([]);
  });
});
