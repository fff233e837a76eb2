// The Go client (clients/go, issue 28) against the real stack: this file starts
// two stacks (the main one, whose database sits behind a bridge the Go tests
// close and reopen through a small control server; a second with
// ratelimit.api_per_minute low), makes the tenants, keys and rows, and runs `go test ./...` in
// clients/go with EDGEMAIL_TEST_* variables. The Go tests themselves send,
// page, verify the dispatcher's webhook signatures and provoke every error
// kind (clients/go/integration_test.go). Skips when `go` is not installed.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { startNeonBridge, type NeonBridge } from '../edge/local/neon-bridge.js';
import { enroll, registerDomain } from './support/relay.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

const goDir = join(import.meta.dirname, '../clients/go');
const hasGo = spawnSync('go', ['version']).status === 0;
if (!hasGo) console.warn('go not found: skipping the Go client suite (test/client-go.test.ts; install golang-go)');

const PER_MINUTE = 4;
const goEnv = { ...process.env, GOPROXY: 'off', GOFLAGS: '-mod=mod', CGO_ENABLED: '0' };

/** Runs a go command in clients/go; resolves with its exit code and everything it printed. */
function go(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('go', args, { cwd: goDir, env: { ...goEnv, ...extraEnv } });
    let output = '';
    child.stdout.on('data', (c: Buffer) => { output += c.toString(); });
    child.stderr.on('data', (c: Buffer) => { output += c.toString(); });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe.skipIf(!hasGo)('the Go client', () => {
  let main: TestStack;
  let limited: TestStack;
  let bridge: NeonBridge;
  let control: Server;
  let compiled: Promise<{ code: number | null; output: string }>;
  let dir: string;
  const env: Record<string, string> = {};
  const startBridge = (port?: number) => startNeonBridge({ port, pgHost: '127.0.0.1', pgPort: inject('pgPort') });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'edgemail-go-'));
    // Compiling the package and its tests (a cold build cache takes a while) runs while the stacks start;
    // `go test -run '^$'` builds and links the test binary without running a test.
    compiled = go(['vet', './...']).then(async (vet) => (vet.code === 0 ? go(['test', '-count=1', '-run', '^$', './...']) : vet));
    bridge = await startBridge();
    [main, limited] = await Promise.all([
      startTestStack({ bridgeUrl: bridge.url, settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SERVICE_SERVER_MAX_BODY_BYTES: '65536' } }),
      startTestStack({ settings: { SERVICE_RATELIMIT_API_PER_MINUTE: String(PER_MINUTE) } }),
    ]);
    control = createServer((req, res) => {
      const action = req.url === '/bridge/close' ? () => bridge.close() : req.url === '/bridge/open' ? async () => { bridge = await startBridge(bridge.port); } : null;
      if (!action) return void res.writeHead(404).end();
      action().then(() => res.writeHead(200).end('ok'), (e: Error) => res.writeHead(500).end(e.message));
    });
    await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));

    const admin = await platformToken(main);
    const acme = await seedProject(main, admin, 'acme');
    const key = async (permissions: string[]) => (await acme.key(permissions)).token;
    const keyAll = await key(['*']);
    const inboundDomain = 'client-go.test';
    await registerDomain(main, acme.project.id, inboundDomain);
    const created = await main.call('POST', '/api/v1/domains', { token: keyAll, body: { name: 'send.client-go.test' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await main.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [created.body.domain.id]);
    const node = await enroll(main, keyAll);

    // Another project holds the 130 inbound rows the paging test walks, so that no other test's mail lands among them.
    const globex = await seedProject(main, admin, 'globex');
    const pagingKey = (await globex.key(['inbound:read', 'audit:read'])).token;
    for (const permissions of [['domains:read'], ['webhooks:read'], ['emails:read']]) await globex.key(permissions); // audit events to page over
    await main.sql.query(
      `INSERT INTO inbound_emails (project_id, spool_id, sender, recipients, subject, auth, size, status, received_at)
       SELECT $1, gen_random_uuid()::text, 'ann@example.org', ARRAY['support@globex.test'], 'paged ' || n,
              '{"spf":"pass","dkim":"pass","dmarc":"pass","aligned":true,"client_ip":"203.0.113.9"}'::jsonb, 10, 'received',
              '2026-11-26T02:00:00Z'::timestamptz + (n % 7) * interval '1 second'
       FROM generate_series(1, 130) AS n`,
      [globex.project.id],
    );
    const { rows } = await main.sql.query(
      `SELECT id FROM inbound_emails WHERE project_id = $1 AND status = 'received' ORDER BY received_at DESC, id DESC`, [globex.project.id]);
    writeFileSync(join(dir, 'paging-ids'), rows.map((r) => r.id as string).join('\n'));

    // A project on a plan of one send an hour, with a verified domain and a key that may send.
    const plan = await main.call('POST', '/api/v1/admin/plans', { token: admin, body: { name: 'one-an-hour', hourly_email_limit: 1, daily_email_limit: 0 } });
    const project = await main.call('POST', '/api/v1/admin/projects', { token: admin, body: { name: 'limited', plan_id: plan.body.plan.id } });
    const inLimited = async (permissions: string[]) => (await main.call('POST', '/api/v1/api-keys', {
      token: admin, headers: { 'X-Service-Project-Id': project.body.project.id }, body: { name: permissions.join(','), permissions },
    })).body.token as string;
    const planDomain = await main.call('POST', '/api/v1/domains', { token: await inLimited(['domains:write']), body: { name: 'limited-go.test' } });
    expect(planDomain.status, JSON.stringify(planDomain.body)).toBe(201);
    await main.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [planDomain.body.domain.id]);

    // On the limited stack, a key minted by a platform credential of its own (a credential's requests count in its
    // window too) and unused until the Go test's burst.
    const limitedProject = await seedProject(limited, await platformToken(limited), 'rate');
    const minted = await limited.call('POST', '/api/v1/api-keys', {
      token: await platformToken(limited, { name: 'minter' }),
      headers: { 'X-Service-Project-Id': limitedProject.project.id }, body: { name: 'request-rate', permissions: ['apikeys:read'] },
    });
    expect(minted.status, JSON.stringify(minted.body)).toBe(201);

    Object.assign(env, {
      EDGEMAIL_TEST_BASE_URL: main.url, EDGEMAIL_TEST_ADMIN: admin, EDGEMAIL_TEST_KEY_ALL: keyAll,
      EDGEMAIL_TEST_KEY_READER: await key(['inbound:read']), EDGEMAIL_TEST_KEY_WEBHOOKS_READ: await key(['webhooks:read']),
      EDGEMAIL_TEST_NODE_TOKEN: node.token, EDGEMAIL_TEST_INBOUND_DOMAIN: inboundDomain, EDGEMAIL_TEST_SEND_DOMAIN: 'send.client-go.test',
      EDGEMAIL_TEST_PAGING_KEY: pagingKey, EDGEMAIL_TEST_PAGING_PROJECT_ID: globex.project.id, EDGEMAIL_TEST_PAGING_IDS_FILE: join(dir, 'paging-ids'),
      EDGEMAIL_TEST_PLAN_KEY: await inLimited(['emails:write']), EDGEMAIL_TEST_PLAN_DOMAIN: 'limited-go.test',
      EDGEMAIL_TEST_LIMITED_BASE_URL: limited.url, EDGEMAIL_TEST_LIMITED_KEY: minted.body.token,
      EDGEMAIL_TEST_PER_MINUTE: String(PER_MINUTE), EDGEMAIL_TEST_CONTROL_URL: `http://127.0.0.1:${(control.address() as AddressInfo).port}`,
    });
  }, 180_000);

  afterAll(async () => {
    await new Promise((resolve) => control?.close(resolve));
    await main?.stop();
    await limited?.stop();
    await bridge?.close().catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('compiles with go 1.19 (go vet, go test -run ^$) and is gofmt-clean', async () => {
    const vet = await compiled;
    expect(vet.code, vet.output).toBe(0);
    const fmt = spawnSync('gofmt', ['-l', '.'], { cwd: goDir, encoding: 'utf8' });
    expect(fmt.status, fmt.stderr).toBe(0);
    expect(fmt.stdout.trim(), 'files gofmt would change').toBe('');
  }, 180_000);

  test('go test ./... passes against the stacks: keys, sends, paging, webhooks, streams, every error kind, 429s and a 503', async () => {
    const run = await go(['test', '-count=1', '-v', '-parallel', '8', '-timeout', '150s', './...'], env);
    console.log(run.output);
    expect(run.code, run.output).toBe(0);
    // Every test ran against the stack rather than skipping.
    expect(run.output).not.toMatch(/--- SKIP/);
    for (const name of ['TestMainStack', 'TestRequestRate', 'TestTimeoutAndCancel']) expect(run.output).toContain(`--- PASS: ${name} `);
    const subtests = ['keys', 'sends_with_and_without_an_Idempotency-Key', 'a_lost_answer', 'paging', 'webhook_signatures', 'streams', 'error_kinds', 'the_plan_limit'];
    for (const name of subtests) expect(run.output).toContain(`--- PASS: TestMainStack/side_by_side/${name} `);
    expect(run.output).toContain('--- PASS: TestMainStack/the_database_out_of_reach');
  }, 180_000);
});
