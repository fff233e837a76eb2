// A relay node in the test process against a test file's real edge: started
// with short periods so tests never wait on its 30 s timers, and what it
// forwarded read back through the public API, as a user reads it. Its
// outbound worker runs too (claims every half second) unless `outbound: false`.
import { loadConfig } from '@edgemail/shared';
import { startRelayNode, type Log, type RelayNode, type RelayNodeOptions, type RelayNodeOutboundOptions } from '../../relay-node/src/index.js';
import type { TestStack } from './stack.js';

export interface TestNodeOptions extends Partial<Omit<RelayNodeOptions, 'config'>> {
  stack: TestStack;
  stateDir: string;
  /** `dns.servers` for the verdicts: a test DNS server, so no check waits on the Internet. */
  dnsAddress: string;
  log: Log;
  /** Settings as `SERVICE_*` variables, over these defaults: no session rate limit, the edge's URL as `server.public_url`. */
  env?: Record<string, string>;
}

/**
 * The outbound worker's test defaults: a claim every half second when idle
 * (well inside the chatter limit beside 300 ms heartbeats), short waits after
 * edge failures, and a stop that gives deliveries in flight 2 s. An `outbound`
 * object given to `startTestNode` is merged over these.
 */
export const TEST_OUTBOUND: RelayNodeOutboundOptions = { idlePollMs: 500, backoff: { initialMs: 100, maxMs: 1000 }, stopTimeoutMs: 2000 };

/**
 * Starts an enrolled node (node.json already in `stateDir`) on a free port of 127.0.0.1.
 *
 * @example const node = await startTestNode({ stack, stateDir, dnsAddress: dns.address, log, env: { SERVICE_RELAY_NODE_INBOUND_MAX_MESSAGE_SIZE: '65536' } });
 */
export function startTestNode({ stack, stateDir, dnsAddress, log, env = {}, outbound, ...extra }: TestNodeOptions): Promise<RelayNode> {
  return startRelayNode({
    stateDir,
    config: loadConfig({ SERVICE_SERVER_PUBLIC_URL: stack.url, SERVICE_RELAY_NODE_INBOUND_RATE_PER_MINUTE: '0', SERVICE_DNS_SERVERS: dnsAddress, ...env }).config,
    port: 0,
    host: '127.0.0.1',
    hostName: 'mx.relay-test.test',
    log,
    drainMs: 1000,
    heartbeatIntervalMs: 300,
    tlsStartupTimeoutMs: 1000,
    forwarder: { backoff: { initialMs: 100, maxMs: 500 }, idlePollMs: 200 },
    outbound: outbound === false ? false : { ...TEST_OUTBOUND, ...outbound },
    ...extra,
    // With acme.enabled, the http-01 responder on a free port: never the machine's port 80.
    acme: { httpPort: 0, ...extra.acme },
  });
}

/** Every inbound record of the key's project (one page of up to 200), newest first. */
export async function inboundRecords(stack: TestStack, token: string): Promise<any[]> {
  const reply = await stack.call('GET', '/api/v1/inbound-emails?limit=200', { token });
  if (reply.status !== 200) throw new Error(`listing inbound emails failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body.inbound_emails;
}

/** The records grouped by subject. */
export async function inboundBySubject(stack: TestStack, token: string): Promise<Map<string, any[]>> {
  const bySubject = new Map<string, any[]>();
  for (const record of await inboundRecords(stack, token)) bySubject.set(record.subject, [...(bySubject.get(record.subject) ?? []), record]);
  return bySubject;
}

/** `GET /api/v1/inbound-emails/{id}/raw`: the bytes as downloaded, with the answer's headers. */
export async function rawMessage(stack: TestStack, token: string, id: string): Promise<{ status: number; bytes: Buffer; headers: Headers }> {
  const res = await fetch(`${stack.url}/api/v1/inbound-emails/${id}/raw`, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()), headers: res.headers };
}
