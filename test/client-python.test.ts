// The Python client (clients/python, issue 28) against the real stack: this
// file starts the stacks and makes what the Python suite needs (tenant, keys,
// 130 inbound rows, a 3 MB raw message, a plan limited to one send an hour),
// then runs `python3 -m unittest` in clients/python/tests with it all in
// environment variables; a failing Python test fails here with its output.
// Two stacks, Python processes side by side: the request-rate suite needs
// `ratelimit.api_per_minute` at 4, the rest needs it
// high; after the request-rate suite its stack's database bridge is closed for
// the outage suite (503 with Retry-After and X-Request-Id).
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { startNeonBridge, type NeonBridge } from '../edge/local/neon-bridge.js';
import { enroll, forward, inboundMeta, registerDomain } from './support/relay.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';

const PYTHON = 'python3';
const python311 = (() => {
  try {
    return execFileSync(PYTHON, ['-c', 'import sys; print(sys.version_info >= (3, 11))'], { encoding: 'utf8' }).trim() === 'True';
  } catch {
    return false;
  }
})();
if (!python311) console.warn('skipping the Python client tests: python3 (3.11 or newer) is not installed');

const CLIENT = join(import.meta.dirname, '../clients/python');
const DOMAIN = 'client-py.test';
const PER_MINUTE = 4;

interface Run { code: number; output: string }
/** Runs the unittest arguments in clients/python with `env`; resolves with the exit code and everything Python printed. */
function unittest(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(PYTHON, ['-m', 'unittest', ...args], {
      cwd: CLIENT, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...env }, maxBuffer: 16 * 1024 * 1024, timeout: 150_000,
    }, (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}${stderr}` }));
  });
}

/**
 * A stack whose API limit is PER_MINUTE, whose DNS-over-HTTPS resolver cannot be reached (a webhook's host
 * cannot be checked: 503), and whose database bridge is its own (closed for the outage suite).
 */
async function rateLimitedStack(): Promise<{ stack: TestStack; bridge: NeonBridge; env: Record<string, string> }> {
  const bridge = await startNeonBridge({ pgHost: '127.0.0.1', pgPort: inject('pgPort') });
  const stack = await startTestStack({
    bridgeUrl: bridge.url,
    settings: { SERVICE_RATELIMIT_API_PER_MINUTE: String(PER_MINUTE), SERVICE_DNS_DOH_URL: 'http://127.0.0.1:9/dns-query' },
  });
  // Four requests of the admin's window: the project (two) and two keys.
  const tenant = await seedProject(stack, await platformToken(stack), 'limited');
  return {
    stack,
    bridge,
    env: {
      EDGEMAIL_RATE_BASE_URL: stack.url,
      EDGEMAIL_RATE_PER_MINUTE: String(PER_MINUTE),
      EDGEMAIL_RATE_KEY: (await tenant.key(['apikeys:read'])).token,
      EDGEMAIL_OUTAGE_KEY: (await tenant.key(['webhooks:write', 'domains:read'])).token,
    },
  };
}

/** The main stack with everything the suite reads: keys, a verified sending domain, inbound rows, a big raw message, a plan-limited key. */
async function mainStack(dir: string): Promise<{ stack: TestStack; env: Record<string, string> }> {
  const stack = await startTestStack({ settings: { SERVICE_WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true', SERVICE_SERVER_MAX_BODY_BYTES: '65536' } });
  const admin = await platformToken(stack);
  const tenant = await seedProject(stack, admin, 'acme');
  const key = async (permissions: string[]) => (await tenant.key(permissions)).token;
  const all = await key(['*']);
  await registerDomain(stack, tenant.project.id, DOMAIN);
  const sending = await stack.call('POST', '/api/v1/domains', { token: all, body: { name: `send.${DOMAIN}` } });
  await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [sending.body.domain.id]);
  const node = await enroll(stack, all);

  // 130 inbound records, several sharing a received_at (the cursor's id breaks the tie).
  await stack.sql.query(
    `INSERT INTO inbound_emails (project_id, spool_id, sender, recipients, subject, auth, size, status, received_at)
     SELECT $1, gen_random_uuid()::text, 'ann@example.org', ARRAY['support@${DOMAIN}'], 'paged ' || n,
            '{"spf":"pass","dkim":"pass","dmarc":"pass","aligned":true,"client_ip":"203.0.113.9"}'::jsonb, 10, 'received',
            '2026-11-26T02:00:00Z'::timestamptz + (n % 7) * interval '1 second'
     FROM generate_series(1, 130) AS n`, [tenant.project.id]);
  // A 3 MB raw message, for the streamed download.
  const line = `${'x'.repeat(76)}\r\n`;
  const raw = `From: ann@example.org\r\nSubject: Big\r\n\r\n${line.repeat(Math.ceil(3_000_000 / line.length))}`;
  const big = await forward(stack, node.token, { meta: inboundMeta([`support@${DOMAIN}`]), raw });
  if (big.status !== 200) throw new Error(`forward failed: ${big.status} ${JSON.stringify(big.body)}`);
  const { rows } = await stack.sql.query(
    `SELECT id FROM inbound_emails WHERE project_id = $1 AND status = 'received' ORDER BY received_at DESC, id DESC`, [tenant.project.id]);
  const inboundIds = join(dir, 'inbound-ids.json');
  writeFileSync(inboundIds, JSON.stringify(rows.map((r) => r.id)));

  // A project on a plan of one send an hour, with a verified domain and a sending key.
  const plan = await stack.call('POST', '/api/v1/admin/plans', { token: admin, body: { name: 'one-an-hour', hourly_email_limit: 1, daily_email_limit: 0 } });
  const limited = await stack.call('POST', '/api/v1/admin/projects', { token: admin, body: { name: 'limited', plan_id: plan.body.plan.id } });
  const inLimited = { token: admin, headers: { 'X-Service-Project-Id': limited.body.project.id } };
  const planKey = await stack.call('POST', '/api/v1/api-keys', { ...inLimited, body: { name: 'sender', permissions: ['domains:write', 'emails:write'] } });
  if (planKey.status !== 201) throw new Error(`plan key: ${planKey.status} ${JSON.stringify(planKey.body)}`);
  const limitedDomain = await stack.call('POST', '/api/v1/domains', { token: planKey.body.token, body: { name: 'limited.test' } });
  await stack.sql.query('UPDATE domains SET verified_at = now() WHERE id = $1', [limitedDomain.body.domain.id]);

  return {
    stack,
    env: {
      EDGEMAIL_BASE_URL: stack.url,
      EDGEMAIL_ADMIN_KEY: admin,
      EDGEMAIL_KEY: all,
      EDGEMAIL_READER_KEY: await key(['inbound:read']),
      EDGEMAIL_WEBHOOKS_READ_KEY: await key(['webhooks:read']),
      EDGEMAIL_FROM: `news@send.${DOMAIN}`,
      EDGEMAIL_PROJECT_ID: tenant.project.id,
      EDGEMAIL_NODE_TOKEN: node.token,
      EDGEMAIL_INBOUND_META: JSON.stringify(inboundMeta([`support@${DOMAIN}`])),
      EDGEMAIL_INBOUND_IDS_FILE: inboundIds,
      EDGEMAIL_RAW_ID: big.body.inbound_emails[0].id,
      EDGEMAIL_RAW_SHA256: createHash('sha256').update(raw).digest('hex'),
      EDGEMAIL_RAW_SIZE: String(Buffer.byteLength(raw)),
      EDGEMAIL_PLAN_KEY: planKey.body.token,
      EDGEMAIL_PLAN_FROM: 'news@limited.test',
      EDGEMAIL_PLAN_NAME: 'one-an-hour',
    },
  };
}

describe.skipIf(!python311)('the Python client against the real stack', () => {
  let dir: string;
  const stacks: TestStack[] = [];
  let bridge: NeonBridge | undefined;
  let main: Promise<Run>;
  let rate: Promise<Run>;
  let outage: Promise<Run>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'edgemail-python-'));
    // The rate-limited stack and its suites run while the main stack is made.
    const limited = rateLimitedStack().then((s) => { stacks.push(s.stack); bridge = s.bridge; return s; });
    rate = limited.then((s) => unittest(['-v', 'tests.test_rate_limit'], s.env));
    // Then its database goes away.
    outage = rate.then(async () => {
      const s = await limited;
      await s.bridge.close();
      return unittest(['-v', 'tests.test_outage'], { EDGEMAIL_OUTAGE_BASE_URL: s.stack.url, EDGEMAIL_OUTAGE_KEY: s.env.EDGEMAIL_OUTAGE_KEY! });
    });
    const made = await mainStack(dir);
    stacks.push(made.stack);
    main = unittest(['discover', '-v', '-s', 'tests', '-t', '.'], made.env);
    await limited;
  }, 120_000);
  afterAll(async () => {
    await Promise.all(stacks.map((s) => s.stop()));
    await bridge?.close().catch(() => {});
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test('python3 -m unittest discover: keys, sends, paging, webhooks, downloads, every error class, pip install', async () => {
    const { code, output } = await main;
    if (code !== 0) console.log(output);
    expect(code, output).toBe(0);
    expect(output).toMatch(/\nOK/);
  }, 150_000);

  test('python3 -m unittest tests.test_rate_limit: a request-rate 429, the retry waiting exactly its Retry-After; a 503 from an unreachable resolver', async () => {
    const { code, output } = await rate;
    if (code !== 0) console.log(output);
    expect(code, output).toBe(0);
    expect(output).not.toMatch(/skipped/);
  }, 150_000);

  test('python3 -m unittest tests.test_outage: the database out of reach is a ServerError with request_id; a GET is retried after Retry-After', async () => {
    const { code, output } = await outage;
    if (code !== 0) console.log(output);
    expect(code, output).toBe(0);
    expect(output).not.toMatch(/skipped/);
  }, 150_000);
});
