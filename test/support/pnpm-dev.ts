// `pnpm dev` as a user runs it, for the tests that drive the real command:
// started in its own process group (so Ctrl-C or a SIGKILL reaches every
// process of the stack), its output kept, and a small API caller.
import { spawn, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { freePort } from '../../edge/local/free-port.js';

export const ROOT = new URL('../../', import.meta.url).pathname;

export interface PnpmDev {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr interleaved. */
  output(): string;
}

/**
 * Starts `pnpm dev` (or `pnpm -s dev` with `silent`) with `env` over this
 * process's environment minus its SERVICE_* variables, and waits for the
 * stack's ready line.
 */
export async function startPnpmDev(env: Record<string, string>, opts: { silent?: boolean; timeoutMs?: number } = {}): Promise<PnpmDev> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
  // The local DNS's port (UDP and TCP) is a free one unless the test names it: two stacks at once would share the default.
  const dns = env.EDGEMAIL_DNS_PORT ? {} : { EDGEMAIL_DNS_PORT: String(await freePort()) };
  const child = spawn('pnpm', opts.silent ? ['-s', 'dev'] : ['dev'], { cwd: ROOT, env: { ...base, ...dns, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d) => { output += d; });
  child.stderr!.on('data', (d) => { output += d; });
  const deadline = Date.now() + (opts.timeoutMs ?? 90_000);
  while (!/edgemail edge ready/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      killGroup(child);
      throw new Error(`pnpm dev did not come up:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, output: () => output };
}

/** SIGKILL to the whole process group: everything dies at once, as in a power cut. */
export function killGroup(child: ChildProcess): void {
  try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* gone */ }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export const listening = (port: number) => new Promise<boolean>((resolve) => {
  const socket = connect(port, '127.0.0.1');
  socket.once('connect', () => { socket.destroy(); resolve(true); });
  socket.once('error', () => resolve(false));
});

/** JSON calls to the stack at `url` with a bearer token (and a project header for platform credentials). */
export function apiCaller(url: string) {
  return async (method: string, path: string, token: string, body?: unknown, project?: string) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...(project ? { 'X-Service-Project-Id': project } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: await res.json() as any };
  };
}
