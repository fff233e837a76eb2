// Enrolment bounds (issue 13, item 8): a project holds at most
// `relay_nodes.max_per_project` unrevoked nodes, checked by the real edge
// (one more is 400 naming the limit and writes nothing, even when enrolments
// race); and `edgemail relay enroll` never sends a key over plain http to
// anything but loopback.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { repoRoot } from '../edge/local/edge-worker.js';
import { readNodeState } from '../relay-node/src/index.js';
import { enroll } from './support/relay.js';
import { platformToken, seedProject, startTestStack, type SeededProject, type TestStack } from './support/stack.js';
import { eventually } from './support/wait.js';

const MAX_NODES = 3;

let stack: TestStack;
let admin: string;
const dirs: string[] = [];

beforeAll(async () => {
  stack = await startTestStack({ settings: { SERVICE_RELAY_NODES_MAX_PER_PROJECT: String(MAX_NODES) } });
  admin = await platformToken(stack);
});
afterAll(async () => {
  await stack?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-enroll-'));
  dirs.push(dir);
  return dir;
};

const enrolment = (token: string, name: string) => stack.call('POST', '/relay/v1/enroll', { token, body: { name, version: '0.1.0' } });

async function nodesOf(project: SeededProject): Promise<{ name: string; revoked: boolean }[]> {
  const { rows } = await stack.sql.query('SELECT name, revoked FROM relay_nodes WHERE project_id = $1 ORDER BY created_at', [project.project.id]);
  return rows;
}

async function enrolledEvents(project: SeededProject): Promise<number> {
  const { rows } = await stack.sql.query(`SELECT count(*)::int AS n FROM audit_events WHERE project_id = $1 AND type = 'relay_node.enrolled'`, [project.project.id]);
  return rows[0].n;
}

const LIMIT_ERROR = `relay node limit reached: this project already has ${MAX_NODES} enrolled relay nodes (relay_nodes.max_per_project); revoke one first`;

describe('relay_nodes.max_per_project', () => {
  test('one node past the cap is 400 naming the limit, and nothing is written; revoking one frees its place', async () => {
    const tenant = await seedProject(stack, admin, 'capped');
    const { token } = await tenant.key(['relay:write', 'relay:read']);
    const nodes = [];
    for (let i = 0; i < MAX_NODES; i++) nodes.push(await enroll(stack, token, `mx-${i}`));
    await eventually(() => enrolledEvents(tenant), (n) => n === MAX_NODES);

    const refused = await enrolment(token, 'mx-one-too-many');
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ error: LIMIT_ERROR });
    expect((await nodesOf(tenant)).map((n) => n.name)).toEqual(['mx-0', 'mx-1', 'mx-2']);
    // A refused enrolment is not audited either (the audit write follows the response, so give it time to show up wrongly).
    await new Promise((r) => setTimeout(r, 300));
    expect(await enrolledEvents(tenant)).toBe(MAX_NODES);

    // Revoked nodes do not count.
    expect((await stack.call('POST', `/api/v1/relay/nodes/${nodes[0]!.id}/revoke`, { token })).status).toBe(200);
    const again = await enrolment(token, 'mx-replacement');
    expect(again.status).toBe(201);
    expect((await enrolment(token, 'mx-still-too-many')).status).toBe(400);
    expect(await nodesOf(tenant)).toEqual([
      { name: 'mx-0', revoked: true }, { name: 'mx-1', revoked: false }, { name: 'mx-2', revoked: false }, { name: 'mx-replacement', revoked: false },
    ]);
  });

  test('the cap is per project: another project enrols while this one is full', async () => {
    const full = await seedProject(stack, admin, 'full');
    const fullKey = (await full.key(['relay:write'])).token;
    for (let i = 0; i < MAX_NODES; i++) await enroll(stack, fullKey, `full-${i}`);
    expect((await enrolment(fullKey, 'full-extra')).status).toBe(400);
    const other = await seedProject(stack, admin, 'other');
    expect((await enrolment((await other.key(['relay:write'])).token, 'other-0')).status).toBe(201);
  });

  test('enrolments racing for the last place: exactly one gets it', async () => {
    const racing = await seedProject(stack, admin, 'racing');
    const token = (await racing.key(['relay:write'])).token;
    for (let i = 0; i < MAX_NODES - 1; i++) await enroll(stack, token, `race-${i}`);
    const replies = await Promise.all(Array.from({ length: 6 }, (_, i) => enrolment(token, `racer-${i}`)));
    expect(replies.map((r) => r.status).sort()).toEqual([201, 400, 400, 400, 400, 400]);
    for (const r of replies.filter((x) => x.status === 400)) expect(r.body).toEqual({ error: LIMIT_ERROR });
    expect(await nodesOf(racing)).toHaveLength(MAX_NODES);
  });
});

interface Run { code: number; stdout: string; stderr: string }

/** `edgemail relay enroll …` as an operator runs it. */
function cliEnroll(args: string[]): Promise<Run> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'edge/cli/main.ts', 'relay', 'enroll', ...args], { cwd: repoRoot, timeout: 60_000 }, (err, stdout, stderr) => {
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
    });
  });
}

describe('relay enroll over plain http', () => {
  test('to a host that is not loopback is refused before anything is sent, naming the rule', async () => {
    const tenant = await seedProject(stack, admin, 'plain-http');
    const { token } = await tenant.key(['relay:write']);
    // A documentation address (never routed): tests stay on loopback, and a CLI that tried to
    // connect would fail differently (no answer) instead of printing the refusal.
    const edge = 'http://192.0.2.1:8787';
    const stateDir = tempDir();
    const run = await cliEnroll(['--edge', edge, '--key', token, '--state-dir', stateDir]);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr.trim()).toBe(`edgemail: --edge ${edge} is plain http: the key and the node credential would cross the network unencrypted; use https:// (http:// is allowed only for loopback: 127.0.0.0/8, ::1, localhost)`);
    expect(existsSync(join(stateDir, 'node.json'))).toBe(false);
    expect(await nodesOf(tenant)).toEqual([]);
  });

  test('to loopback (localhost, 127.0.0.1) is allowed and enrols at the real edge', async () => {
    const tenant = await seedProject(stack, admin, 'loopback');
    const { token } = await tenant.key(['relay:write']);
    const port = new URL(stack.url).port;
    for (const edge of [`http://localhost:${port}`, `http://127.0.0.1:${port}`]) {
      const stateDir = tempDir();
      const run = await cliEnroll(['--edge', edge, '--key', token, '--state-dir', stateDir]);
      expect(run.code, run.stderr).toBe(0);
      expect(await readNodeState(stateDir)).toMatchObject({ node_id: run.stdout.trim(), edge_url: edge });
    }
    expect(await nodesOf(tenant)).toHaveLength(2);
  });
});
