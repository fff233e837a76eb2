// A delivery that outlasts its lease is not delivered twice (issue 31, the
// duplicate seen by "two relay nodes drain one queue" under load). The
// receiving MX here is slow the way a real one behind a content filter is: it
// takes the message at the end of DATA (queued, as Postfix queues before it
// answers, so a client that hangs up then still has it delivered) and answers
// 250 only after DATA_REPLY_MS, longer than the lease. Two nodes, two slots
// each and as many claimed ahead, so some jobs also wait longer than the
// lease for a slot. The nodes renew the leases of the jobs they hold
// (POST /relay/v1/outbound/renew), so each recipient is delivered once, by
// one attempt. Before renewals, a node cut each delivery off before the
// lease's end (after the message was taken), reported it deferred, and
// it was delivered again and again.
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
import type * as SmtpServerModule from '../relay-node/node_modules/smtp-server/dist/cjs/smtp-server.js';
import { registerProvenDomain } from './support/domain-ownership.js';
import { enroll, makeInstallationWide, type EnrolledNode } from './support/relay.js';
import { startTestNode } from './support/relay-node.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const { SMTPServer } = createRequire(new URL('../relay-node/package.json', import.meta.url))('smtp-server') as typeof SmtpServerModule;

const LEASE_S = 5;
/** How long the MX takes to answer DATA: longer than the lease. */
const DATA_REPLY_MS = 7000;
const RECIPIENTS = 8;
const DOMAIN = `lease-${crypto.randomUUID().slice(0, 6)}.test`;

let stack: TestStack;
let dns: TestDnsServer;
let sender: string;
let rx: { port: number; taken: string[]; close(): Promise<void> };
const nodes: EnrolledNode[] = [];
const running: RelayNode[] = [];
const dirs: string[] = [];
const logs: LogLine[] = [];

/** The slow MX: a message is taken (counted) at the end of DATA, answered 250 DATA_REPLY_MS later. */
async function startSlowMx(): Promise<typeof rx> {
  const taken: string[] = [];
  const server = new SMTPServer({
    logger: false, disableReverseLookup: true, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'],
    onData(stream, session, callback) {
      stream.on('data', () => undefined);
      stream.on('end', () => {
        taken.push(session.envelope.rcptTo[0]?.address ?? '');
        setTimeout(() => callback(null, 'queued'), DATA_REPLY_MS);
      });
    },
  });
  // A client that hangs up while its reply is held: expected with the old code.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    taken,
    close: () => new Promise<void>((resolve) => {
      for (const c of (server as unknown as { connections: Set<{ close(): void }> }).connections) c.close();
      server.close(() => resolve());
    }),
  };
}

beforeAll(async () => {
  stack = await startTestStack({
    settings: {
      SERVICE_OUTBOUND_LEASE: `${LEASE_S}s`,
      SERVICE_OUTBOUND_RETRY_DELAY: '1s',
      SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000',
    },
  });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'outbound-lease-renewal');
  const manager = (await tenant.key(['relay:write', 'domains:write'])).token;
  sender = (await tenant.key(['emails:write'])).token;
  const domainId = await registerProvenDomain(stack, manager, DOMAIN);
  await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [domainId]);
  dns = await startDnsServer();
  rx = await startSlowMx();
  for (const name of ['a', 'b']) {
    const node = await enroll(stack, manager, `mx-lease-${name}`);
    await makeInstallationWide(stack, node.id);
    const dir = mkdtempSync(join(tmpdir(), `outbound-lease-${name}-`));
    await writeNodeState(dir, { edge_url: stack.url, node_id: node.id, name: `mx-lease-${name}`, token: node.token, enrolled_at: new Date().toISOString() });
    nodes.push(node);
    dirs.push(dir);
  }
  for (const [i, dir] of dirs.entries()) {
    running.push(await startTestNode({
      stack, stateDir: dir, dnsAddress: dns.address, log: collectingLog(logs),
      env: { SERVICE_OUTBOUND_SMARTHOST: `127.0.0.1:${rx.port}`, SERVICE_OUTBOUND_HELO_NAME: `mx-${i}.lease.test`, SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false' },
      // Two slots (and two claimed ahead); the MX's silence while it holds a reply is not a timeout.
      outbound: { concurrency: 2, idlePollMs: 200, timeouts: { connectionMs: 5000, greetingMs: 5000, socketMs: 20_000 }, stopTimeoutMs: 1000 },
    }));
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(running.map((n) => n.stop()));
  await rx?.close();
  await dns?.close();
  await stack?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('leases of slow deliveries', () => {
  test(`deliveries and waits longer than the lease (${DATA_REPLY_MS} ms vs ${LEASE_S} s), two nodes: every recipient taken by the MX exactly once, sent at attempt 1`, async () => {
    const recipients = Array.from({ length: RECIPIENTS }, (_, i) => `slow-${i}@example.org`);
    const sent = await stack.call('POST', '/api/v1/emails/send', {
      token: sender, body: { from: `news@${DOMAIN}`, to: recipients, subject: 'slow MX', text: 'Hello.' },
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const ids = (sent.body.emails as { id: string }[]).map((e) => e.id);

    const sentCount = async () => (await stack.sql.query(`SELECT count(*)::int AS n FROM emails WHERE id = ANY($1) AND status = 'sent'`, [ids])).rows[0].n as number;
    // All sent, or (the old code, about 6 s in) a recipient taken a second time: no need to wait out the rest.
    await eventually(sentCount, (n) => n === RECIPIENTS || rx.taken.length > RECIPIENTS, 45_000);

    expect([...rx.taken].sort()).toEqual([...recipients].sort());
    const { rows } = await stack.sql.query('SELECT status, attempts, node_id FROM emails WHERE id = ANY($1)', [ids]);
    expect(rows.map((r) => [r.status, r.attempts])).toEqual(rows.map(() => ['sent', 1]));
    const attempts = await stack.sql.query('SELECT attempt, outcome FROM email_attempts WHERE email_id = ANY($1)', [ids]);
    expect(attempts.rows.map((a) => [a.attempt, a.outcome])).toEqual(ids.map(() => [1, 'sent']));
    // Both nodes took a share, and neither gave a job back or lost a lease.
    expect(new Set(rows.map((r) => r.node_id))).toEqual(new Set(nodes.map((n) => n.id)));
    expect(logs.filter((l) => /not started|stale/.test(l.message))).toEqual([]);
  }, 60_000);

  test('a node renews only the leases it holds at the attempt it names: another node\'s, another attempt\'s, a reported one are lost and unchanged; a body of more than 200 is refused', async () => {
    // The nodes stop claiming: this test claims by hand with their credentials.
    await Promise.all(running.splice(0).map((n) => n.stop()));
    const sent = await stack.call('POST', '/api/v1/emails/send', { token: sender, body: { from: `news@${DOMAIN}`, to: ['renew@example.org'], subject: 'renew', text: 'Hello.' } });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const id = sent.body.emails[0].id as string;
    const claim = await stack.call('POST', '/relay/v1/outbound/claim', { token: nodes[0]!.token, body: { max: 10 } });
    expect(claim.status).toBe(200);
    expect(claim.body.jobs.map((j: { email_id: string }) => j.email_id)).toEqual([id]);
    const leaseOf = async () => (await stack.sql.query('SELECT next_attempt_at, lease_node_id, attempts FROM emails WHERE id = $1', [id])).rows[0];
    const claimed = await leaseOf();
    expect(claimed).toMatchObject({ lease_node_id: nodes[0]!.id, attempts: 1 });

    const renew = (node: EnrolledNode, leases: unknown[]) => stack.call('POST', '/relay/v1/outbound/renew', { token: node.token, body: { leases } });
    // Another node: lost, nothing changed.
    expect((await renew(nodes[1]!, [{ email_id: id, attempt: 1 }])).body).toEqual({ renewed: [], lost: [id] });
    // Another attempt: lost.
    expect((await renew(nodes[0]!, [{ email_id: id, attempt: 2 }])).body).toEqual({ renewed: [], lost: [id] });
    expect(await leaseOf()).toEqual(claimed);
    // Too many: 400 naming the field, nothing changed.
    const many = await renew(nodes[0]!, Array.from({ length: 201 }, () => ({ email_id: id, attempt: 1 })));
    expect(many.status).toBe(400);
    expect(JSON.stringify(many.body)).toContain('leases');
    expect(await leaseOf()).toEqual(claimed);

    // The holder at its attempt: renewed to now() + outbound.lease.
    await new Promise((r) => setTimeout(r, 300));
    const renewed = await renew(nodes[0]!, [{ email_id: id, attempt: 1 }]);
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({ renewed: [{ email_id: id, lease_ms: LEASE_S * 1000 }], lost: [] });
    const after = await leaseOf();
    expect(after.next_attempt_at.getTime()).toBeGreaterThan(claimed.next_attempt_at.getTime());
    // The answer's end is the row's, to the millisecond it is written in.
    expect(Math.abs(Date.parse(renewed.body.renewed[0].lease_until) - after.next_attempt_at.getTime())).toBeLessThanOrEqual(1);

    // Reported: the lease is let go, and a later renewal is lost.
    const report = await stack.call('POST', '/relay/v1/outbound/results', {
      token: nodes[0]!.token,
      body: { results: [{ email_id: id, attempt: 1, outcome: 'sent', smtp_code: 250, reply: '250 ok', server: 'mx.example.org:25', started_at: new Date().toISOString(), duration_ms: 5 }] },
    });
    expect(report.body).toEqual({ accepted: [id], stale: [] });
    expect((await renew(nodes[0]!, [{ email_id: id, attempt: 1 }])).body).toEqual({ renewed: [], lost: [id] });
  }, 30_000);
});
