// The outbound worker inside a whole node (startRelayNode): on by default,
// `outbound: false` leaves it off, stop() reports what was in flight. The edge
// is the stand-in of the outbound routes (plus trivial domains/heartbeat answers).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '@edgemail/shared';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startRelayNode } from '../node.js';
import type { Log } from '../log.js';
import { writeNodeState } from '../state/index.js';
import { makeJob } from '../../test-support/jobs.js';
import { startFakeEdge, type FakeEdge } from '../../test-support/fake-edge.js';

const lines: { level: string; message: string; fields?: Record<string, unknown> }[] = [];
const log: Log = {
  info: (message, fields) => lines.push({ level: 'info', message, fields }),
  warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
  error: (message, fields) => lines.push({ level: 'error', message, fields }),
};

let edge: FakeEdge;
let dir: string;

beforeAll(async () => {
  edge = await startFakeEdge();
  dir = await mkdtemp(join(tmpdir(), 'edgemail-node-outbound-'));
});

afterAll(async () => {
  await edge?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function node(name: string, outbound: false | { idlePollMs: number }) {
  const stateDir = join(dir, name);
  await writeNodeState(stateDir, { edge_url: edge.url, node_id: `node-${name}`, name, token: edge.token, enrolled_at: new Date().toISOString() });
  const config = loadConfig({
    SERVICE_SERVER_PUBLIC_URL: edge.url,
    SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false',
    SERVICE_OUTBOUND_CAPTURE_DIR: join(dir, `${name}-capture`),
    SERVICE_OUTBOUND_CONCURRENCY: '2',
  }).config;
  return startRelayNode({ stateDir, config, port: 0, host: '127.0.0.1', hostName: 'relay.acme.test', log, drainMs: 200, heartbeatIntervalMs: 60_000, outbound });
}

test('a started node claims, captures and reports; outbound.concurrency bounds its claims', async () => {
  const relay = await node('on', { idlePollMs: 50 });
  try {
    const jobs = [makeJob('a@dest.test'), makeJob('b@dest.test'), makeJob('c@dest.test')];
    edge.queue.push(...jobs);
    const results = await edge.waitForResults(3);
    expect(results.map((r) => r.outcome)).toEqual(['sent', 'sent', 'sent']);
    expect(Math.max(...edge.claims)).toBeLessThanOrEqual(2);
    const file = join(dir, 'on-capture', `${jobs[0]!.email_id}.eml`);
    expect(await readFile(file, 'utf8')).toContain(jobs[0]!.message.message_id);
    expect(lines.find((l) => l.message === 'relay node started')?.fields?.outbound).toBe(`capture:${join(dir, 'on-capture')}`);
  } finally {
    await relay.stop();
  }
  const claims = edge.claims.length;
  await new Promise((r) => setTimeout(r, 150));
  expect(edge.claims.length).toBe(claims);
});

test('outbound: false: the node never claims', async () => {
  const claims = edge.claims.length;
  const relay = await node('off', false);
  try {
    await new Promise((r) => setTimeout(r, 200));
    expect(edge.claims.length).toBe(claims);
  } finally {
    await relay.stop();
  }
});
