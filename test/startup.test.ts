// `pnpm dev` with a bad setting: start-up stops at once, names the setting and
// never gets as far as starting PostgreSQL.
import { spawn } from 'node:child_process';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './support/global-setup.js';

const ROOT = new URL('../', import.meta.url).pathname;
/** How long a refused start may take (tsx start-up included). */
const DEADLINE_MS = 15_000;

interface Outcome { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string; timedOut: boolean }

/**
 * Runs `pnpm -s dev` with `env` added to a clean environment (no inherited
 * SERVICE_*), on free ports; kills its whole process group if it is still
 * running after the deadline, so a stack that does start never hangs the test.
 */
async function startDev(env: Record<string, string>): Promise<Outcome & { pgPort: number }> {
  const [pgPort, bridgePort, workerPort] = [await freePort(), await freePort(), await freePort()];
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
  const child = spawn('pnpm', ['-s', 'dev'], {
    cwd: ROOT,
    env: { ...base, EDGEMAIL_PG_PORT: String(pgPort), EDGEMAIL_BRIDGE_PORT: String(bridgePort), EDGEMAIL_PORT: String(workerPort), ...env },
    detached: true, // own process group: pnpm → tsx → node can be stopped together
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try { process.kill(-child.pid!, 'SIGINT'); } catch { /* already gone */ }
    setTimeout(() => { try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ } }, 10_000).unref();
  }, DEADLINE_MS);
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.on('close', (c, s) => resolve([c, s])));
  clearTimeout(timer);
  return { code, signal, stdout, stderr, timedOut, pgPort };
}

/** Whether anything accepts connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

function expectRefusedEarly(outcome: Outcome) {
  expect(outcome.timedOut, `still running after ${DEADLINE_MS} ms; stdout:\n${outcome.stdout}\nstderr:\n${outcome.stderr}`).toBe(false);
  expect(outcome.code).not.toBe(0);
  expect(outcome.code).not.toBeNull();
  // Nothing of the stack was started.
  expect(outcome.stdout).not.toMatch(/postgres ready|edge ready/);
}

describe('pnpm dev refuses a bad setting before starting anything', { timeout: 45_000 }, () => {
  it('a malformed value names the setting and its env variable', async () => {
    const outcome = await startDev({ SERVICE_RATELIMIT_API_PER_MINUTE: 'lots' });
    expectRefusedEarly(outcome);
    expect(outcome.stderr).toContain('ratelimit.api_per_minute');
    expect(outcome.stderr).toContain('SERVICE_RATELIMIT_API_PER_MINUTE');
    expect(await listening(outcome.pgPort)).toBe(false);
  });

  it('an unknown SERVICE_* variable is named', async () => {
    const outcome = await startDev({ SERVICE_NO_SUCH_SETTING: '1' });
    expectRefusedEarly(outcome);
    expect(outcome.stderr).toContain('SERVICE_NO_SUCH_SETTING');
    expect(await listening(outcome.pgPort)).toBe(false);
  });

  it('PROXY protocol enabled with no trusted peers is refused', async () => {
    const outcome = await startDev({ SERVICE_SUBMISSION_PROXY_PROTOCOL_ENABLED: 'true' });
    expectRefusedEarly(outcome);
    expect(outcome.stderr).toContain('submission.proxy_protocol.trusted');
    expect(await listening(outcome.pgPort)).toBe(false);
  });
});
