// `edgemail relay start` as an operator runs it, with an EHLO name receivers
// would refuse (issue 14, item 4): the node does not start, and the one line
// it prints names the setting. What a started node sends is shown by
// relay-node/src/outbound/outbound-manners.test.ts against a real receiver.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { writeNodeState } from '../relay-node/src/state/index.js';

const ROOT = new URL('../', import.meta.url).pathname;
let stateDir: string;

beforeAll(async () => {
  stateDir = mkdtempSync(join(tmpdir(), 'edgemail-relay-helo-'));
  // An enrolled node, so that the EHLO name is the only thing in its way.
  await writeNodeState(stateDir, { edge_url: 'http://127.0.0.1:9', node_id: 'node-helo', name: 'helo', token: 'myr_helotest_secret', enrolled_at: new Date().toISOString() });
});

afterAll(() => {
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** `pnpm -s edgemail relay start` with only `env` as its SERVICE_* settings. */
function relayStart(env: Record<string, string>): Promise<{ code: number; stderr: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
  return new Promise((resolve) => {
    execFile('pnpm', ['-s', 'edgemail', 'relay', 'start', '--state-dir', stateDir, '--port', '0', '--submission-port', '0', '--host', '127.0.0.1'],
      { cwd: ROOT, env: { ...base, ...env }, timeout: 60_000 }, (err, _stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stderr });
      });
  });
}

test.each([
  [{ SERVICE_OUTBOUND_HELO_NAME: 'vm' },
    'edgemail: invalid setting outbound.helo_name (SERVICE_OUTBOUND_HELO_NAME): "vm" is not a fully qualified domain name (must have at least two labels (example.com))'],
  [{ SERVICE_SERVER_PUBLIC_URL: 'http://localhost:8787' },
    'edgemail: invalid setting outbound.helo_name (SERVICE_OUTBOUND_HELO_NAME): not set, and the host of server.public_url ("localhost") is not a fully qualified domain name (must have at least two labels (example.com)); set it to this node\'s name, the one its outbound address resolves back to'],
])('%o: not started, exit 2, the setting named', async (env, line) => {
  const run = await relayStart(env);
  expect(run.code).toBe(2);
  expect(run.stderr.split('\n')[0]).toBe(line);
  expect(run.stderr).not.toContain('relay node started');
});
