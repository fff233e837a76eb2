// A 250 on the submission listener is a promise (docs/submission.md, "Answered
// at the node"): messages stream in over real SMTP from several connections,
// the relay node and the edge (workerd) are SIGKILLed mid-stream, both start
// again on the same state, and every message that got its 250 is in the email
// log exactly once (one message row, one row per recipient).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import type * as NodemailerModule from '../relay-node/node_modules/@types/nodemailer/index.js';
import { writeNodeState } from '../relay-node/src/state/index.js';
import { repoRoot, startEdgeWorker, type EdgeWorker } from '../edge/local/edge-worker.js';
import { ENCRYPTION_KEY_ENV } from '../edge/local/encryption-key.js';
import { freePort } from './support/global-setup.js';
import { enroll, makeInstallationWide } from './support/relay.js';
import { platformToken, seedProject, startTestStack, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const nodemailer = createRequire(new URL('../relay-node/package.json', import.meta.url))('nodemailer') as typeof NodemailerModule;

const CONNECTIONS = 4;
const KILL_AFTER = 60;
const SETTINGS = { SERVICE_RATELIMIT_RELAY_NODE_CHATTER_PER_MINUTE: '100000', SERVICE_RATELIMIT_RELAY_NODE_INBOUND_PER_MINUTE: '100000' };

let stack: TestStack;
let stateDir: string;
const children: ChildProcess[] = [];
let edgeWorker: EdgeWorker | undefined;

/** The workerd processes this test process started (wrangler runs one per Worker). */
function workerdChildren(): number[] {
  const out = spawnSync('pgrep', ['-P', String(process.pid), 'workerd'], { encoding: 'utf8' }).stdout;
  return out.split('\n').filter(Boolean).map(Number);
}

/** A process group of its own (`detached`), so that SIGKILL takes its children (workerd) too. */
function startGroup(args: string[], env: Record<string, string>, ready: RegExp): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: repoRoot, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d;
      if (ready.test(output)) resolve(child);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => reject(new Error(`exited (${code ?? signal}) before it was ready: ${output.slice(-2000)}`)));
  });
}

async function killGroup(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  process.kill(-child.pid!, 'SIGKILL');
  await exited;
}

beforeAll(async () => {
  stack = await startTestStack({ settings: SETTINGS });
  stateDir = mkdtempSync(join(tmpdir(), 'edgemail-submission-crash-'));
}, 60_000);

afterAll(async () => {
  for (const child of children) await killGroup(child).catch(() => undefined);
  await edgeWorker?.stop().catch(() => undefined);
  await stack?.stop();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

test('every message answered 250 before a SIGKILL of the node and the edge is in the email log exactly once after both restart', async () => {
  const admin = await platformToken(stack);
  const acme = await seedProject(stack, admin, 'crash');
  const domain = `crash-${crypto.randomUUID().slice(0, 6)}.test`;
  const d = await stack.call('POST', '/api/v1/domains', { token: (await acme.key(['domains:write'])).token, body: { name: domain } });
  expect(d.status).toBe(201);
  await stack.sql.query('UPDATE domains SET verified_at = now(), ownership_proven_at = now() WHERE id = $1', [d.body.domain.id]);
  const sender = (await acme.key(['emails:write'])).token;
  const enrolled = await enroll(stack, (await acme.key(['relay:write'])).token);
  await makeInstallationWide(stack, enrolled.id);

  // The edge to kill: a Worker of its own on the same database, at a port that stays the same across the
  // restart. Its workerd process is SIGKILLed, as a crash of the runtime would end it.
  const edgePort = await freePort();
  const startEdge = async (): Promise<{ worker: EdgeWorker; workerd: number }> => {
    const before = new Set(workerdChildren());
    const worker = await startEdgeWorker({
      vars: { SERVICE_DATABASE_URL: stack.databaseUrl, [ENCRYPTION_KEY_ENV]: stack.encryptionKey, ...SETTINGS, LOCAL_NEON_BRIDGE: inject('bridgeUrl') },
      port: edgePort, persistTo: false, logLevel: 'none',
    });
    const started = workerdChildren().filter((pid) => !before.has(pid));
    expect(started, 'the new Worker\'s workerd process').toHaveLength(1);
    return { worker, workerd: started[0]! };
  };
  let edge = await startEdge();
  edgeWorker = edge.worker;
  const edgeUrl = `http://127.0.0.1:${edgePort}`;
  await writeNodeState(stateDir, { edge_url: edgeUrl, node_id: enrolled.id, name: 'crash', token: enrolled.token, enrolled_at: new Date().toISOString() });
  const submissionPort = await freePort();
  // The operator binary; submission over loopback without TLS (AUTH from loopback is allowed), deliveries captured.
  const startNode = () => startGroup(
    ['edge/cli/main.ts', 'relay', 'start', '--state-dir', stateDir, '--port', '0', '--submission-port', String(submissionPort), '--host', '127.0.0.1'],
    {
      SERVICE_RELAY_NODE_INBOUND_TLS_ENABLED: 'false', SERVICE_SUBMISSION_TLS_ENABLED: 'false', SERVICE_SERVER_PUBLIC_URL: edgeUrl,
      SERVICE_OUTBOUND_CAPTURE_DIR: join(stateDir, 'capture'), SERVICE_SUBMISSION_RATE_PER_MINUTE: '0',
    },
    /relay node started/,
  );
  let node = await startNode();

  const accepted: string[] = [];
  const attempted: string[] = [];
  let killed = false;
  let kill: Promise<void> | null = null;
  const killBoth = () => (kill ??= (async () => {
    killed = true;
    process.kill(edge.workerd, 'SIGKILL');
    await killGroup(node);
    // What is left of it in this process (wrangler's proxy) is let go of; the runtime is already dead.
    await Promise.race([edge.worker.stop().catch(() => undefined), new Promise((r) => setTimeout(r, 5_000))]);
  })());
  const stream = async (c: number) => {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1', port: submissionPort, secure: false, ignoreTLS: true, pool: true, maxConnections: 1, maxMessages: Infinity,
      auth: { user: 'apikey', pass: sender },
    });
    try {
      for (let i = 0; !killed; i++) {
        const subject = `crash-${c}-${i}`;
        attempted.push(subject);
        const info = await transport.sendMail({ from: `news@${domain}`, to: [`r${c}@example.org`, `s${c}@example.org`], subject, text: `Body of ${subject}.` });
        if (!/^250 /.test(info.response)) break;
        accepted.push(subject);
        if (accepted.length === KILL_AFTER) void killBoth();
      }
    } catch {
      // The node died under the session.
    } finally {
      transport.close();
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, (_, c) => stream(c)));
  await killBoth();
  expect(accepted.length).toBeGreaterThanOrEqual(KILL_AFTER);
  const spooled = readdirSync(join(stateDir, 'submission-spool')).filter((n) => /\.(json|msg)$/.test(n)).length;

  edge = await startEdge();
  edgeWorker = edge.worker;
  node = await startNode();
  const logged = async () => {
    const { rows } = await stack.sql.query(
      `SELECT m.subject, count(DISTINCT m.id)::int AS messages, count(e.id)::int AS emails
       FROM outbound_messages m JOIN emails e ON e.message_id = m.id WHERE m.project_id = $1 GROUP BY m.subject`, [acme.project.id]);
    return new Map(rows.map((r) => [r.subject as string, r as { messages: number; emails: number }]));
  };
  const log = await eventually(logged, (m) => accepted.every((s) => m.has(s)), 30_000);
  expect(accepted.filter((s) => !log.has(s)), 'answered 250, then lost').toEqual([]);
  for (const subject of accepted) expect(log.get(subject), subject).toEqual({ subject, messages: 1, emails: 2 });
  // A message cut off before its 250 may be there or not, but never twice.
  for (const subject of attempted) expect(log.get(subject)?.messages ?? 0, subject).toBeLessThanOrEqual(1);
  await eventually(async () => readdirSync(join(stateDir, 'submission-spool')).filter((n) => /\.(json|msg)$/.test(n)).length, (n) => n === 0, 15_000);
  console.info(`submission crash: ${accepted.length} answered 250 (${spooled} still spooled at the kill), ${attempted.length - accepted.length} cut off`);
}, 120_000);
