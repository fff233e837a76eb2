// `pnpm dev` with a port taken (issue 26, item 1): it used to hang silently
// when the Worker's port was taken (wrangler waited for ever) and to end in a
// stack trace on a taken SMTP port; Ctrl-C did nothing useful before the stack
// was up. Now every taken port stops the start within seconds, with one line
// naming the port, the variable that moves it and the process holding it; a
// port taken between that check and the bind ends the same way, with what had
// started stopped; and Ctrl-C from the first second prints "stopping…" and
// leaves nothing running.
import { spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { afterAll, describe, expect, test } from 'vitest';
import { freePort } from './support/global-setup.js';
import { reachableByPostgres } from '../edge/local/postgres.js';
import { descendants, processInfo } from '../edge/local/stack-processes.js';
import { eventually } from './support/wait.js';
import { killGroup, listening, ROOT } from './support/pnpm-dev.js';

const dataDirs: string[] = [];
const newDataDir = () => {
  const dir = mkdtempSync(`${ROOT}.data/dev-ports-`);
  dataDirs.push(dir);
  return dir;
};
afterAll(async () => {
  await new Promise((r) => setTimeout(r, 2000));
  for (const dir of dataDirs) {
    if (process.getuid?.() === 0) rmSync(reachableByPostgres(`${dir}/pg`), { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
});

const VARIABLES = ['EDGEMAIL_PORT', 'EDGEMAIL_PG_PORT', 'EDGEMAIL_BRIDGE_PORT', 'EDGEMAIL_INBOUND_PORT', 'EDGEMAIL_SUBMISSION_PORT', 'EDGEMAIL_DNS_PORT'] as const;

/** Every port variable on a free non-default port, and a data directory of its own. */
async function freeEnv(): Promise<Record<string, string>> {
  const env: Record<string, string> = { EDGEMAIL_DATA_DIR: newDataDir() };
  for (const name of VARIABLES) env[name] = String(await freePort());
  return env;
}

interface Run { code: Promise<number | null>; output(): string; pid: number; startedAt: number }

/** `pnpm -s dev` in its own process group; `onOutput` sees the output as it grows. */
function runDev(env: Record<string, string>, onOutput?: (output: string) => void): Run {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SERVICE_')));
  const child = spawn('pnpm', ['-s', 'dev'], { cwd: ROOT, env: { ...base, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const grow = (d: Buffer) => { output += d; onOutput?.(output); };
  child.stdout!.on('data', grow);
  child.stderr!.on('data', grow);
  const code = new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
  // Never left behind: whatever happens, the group is gone after 90 s.
  const guard = setTimeout(() => killGroup(child), 90_000);
  void code.then(() => clearTimeout(guard));
  return { code, output: () => output, pid: child.pid!, startedAt: Date.now() };
}

const held: (Server | ReturnType<typeof createSocket>)[] = [];
afterAll(() => { for (const h of held) h.close(); });

function holdTcp(port: number): Promise<void> {
  const server = createServer();
  held.push(server);
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
}

const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return '';
  }
};

/** Processes whose command line names `dataDir` (PostgreSQL's `-D`, the watchdog's argument). */
function processesOn(dataDir: string): string[] {
  return readdirSync('/proc').filter((e) => /^\d+$/.test(e) && commandLine(Number(e)).includes(dataDir));
}

/** The one line, as it names this test's process as the holder. */
const inUseLine = (port: number, setting: string) =>
  `edgemail: port ${port} (${setting}) is in use by pid ${process.pid} (${processInfo(process.pid)!.name}): stop it or set ${setting} to another port`;

describe('a taken port', () => {
  test.each(VARIABLES)('%s taken: one line naming the port, the variable and the holder, exit 1 within 15 s', async (setting) => {
    const env = await freeEnv();
    const port = Number(env[setting]);
    await holdTcp(port);
    const run = runDev(env);
    const code = await run.code;
    expect(Date.now() - run.startedAt).toBeLessThan(15_000);
    expect(code).toBe(1);
    // Nothing but that line: no stack trace.
    expect(run.output().trim()).toBe(inUseLine(port, setting));
  }, 30_000);

  test('the DNS port held over UDP alone is named too', async () => {
    const env = await freeEnv();
    const port = Number(env.EDGEMAIL_DNS_PORT);
    const socket = createSocket('udp4');
    held.push(socket);
    await new Promise<void>((resolve) => socket.bind(port, '127.0.0.1', () => resolve()));
    const run = runDev(env);
    expect(await run.code).toBe(1);
    expect(run.output().trim()).toBe(inUseLine(port, 'EDGEMAIL_DNS_PORT'));
  }, 30_000);

  test('the Worker port taken after the check (PostgreSQL already up): the same line, what started is stopped, no hang', async () => {
    const env = await freeEnv();
    const port = Number(env.EDGEMAIL_PORT);
    let taking: Promise<void> | undefined;
    const run = runDev(env, (output) => {
      if (!taking && /\[stack\] postgres ready/.test(output)) taking = holdTcp(port);
    });
    const code = await run.code;
    expect(taking).toBeDefined();
    expect(code).toBe(1);
    const lines = run.output().trim().split('\n');
    expect(lines.at(-1)).toBe(inUseLine(port, 'EDGEMAIL_PORT'));
    expect(run.output()).not.toMatch(/^\s+at /m);
    // PostgreSQL and the bridge, started before the Worker, are stopped.
    expect(await listening(Number(env.EDGEMAIL_PG_PORT))).toBe(false);
    expect(await listening(Number(env.EDGEMAIL_BRIDGE_PORT))).toBe(false);
    await eventually(async () => processesOn(env.EDGEMAIL_DATA_DIR!), (p) => p.length === 0, 10_000);
  }, 120_000);
});

describe('Ctrl-C during start-up', () => {
  const ctrlC = async (run: Run, env: Record<string, string>) => {
    process.kill(-run.pid, 'SIGINT');
    // (pnpm itself dies of the signal, as in a terminal: its exit code says nothing.)
    await run.code;
    expect(run.output()).toContain('stopping…');
    expect(run.output()).not.toMatch(/^\s+at /m);
    expect(run.output()).not.toMatch(/edgemail edge ready|ELIFECYCLE|error/i);
    // Nothing is left: no port open, no process on the data directory (PostgreSQL, workerd's, the watchdog).
    const ports = VARIABLES.map((v) => Number(env[v]));
    await eventually(async () => ({ open: (await Promise.all(ports.map(listening))).filter(Boolean).length, processes: processesOn(env.EDGEMAIL_DATA_DIR!) }),
      (s) => s.open === 0 && s.processes.length === 0, 10_000);
    expect(await Promise.all(ports.map(listening))).toEqual(ports.map(() => false));
  };

  test('1 s after the dev process started: "stopping…", nothing left', async () => {
    const env = await freeEnv();
    const run = runDev(env);
    // pnpm's own start (seconds on a busy machine) comes before ours: a Ctrl-C then ends pnpm
    // before anything started. The second counts from the node process pnpm runs.
    await eventually(async () => descendants(run.pid).some((p) => commandLine(p.pid).includes('edge/local/dev.ts')), (found) => found, 20_000);
    await new Promise((r) => setTimeout(r, 1000));
    await ctrlC(run, env);
  }, 60_000);

  test('with PostgreSQL up and the rest starting: "stopping…", what started is stopped, nothing left', async () => {
    const env = await freeEnv();
    let up!: () => void;
    const pgUp = new Promise<void>((resolve) => { up = resolve; });
    const run = runDev(env, (output) => { if (/\[stack\] postgres ready/.test(output)) up(); });
    await pgUp;
    await ctrlC(run, env);
  }, 120_000);
});
