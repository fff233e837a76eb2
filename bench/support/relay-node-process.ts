// A relay node in a child process (smtp-relay-node-child.ts), as a node runs
// in production: it never shares an event loop with the Neon bridge (in the
// bench process) or the load client.
import { fork } from 'node:child_process';
import type { RelayNodeChildMessage, RelayNodeChildStart, ThreadCpu } from './smtp-relay-node-child.js';
export type { ThreadCpu } from './smtp-relay-node-child.js';
import { cleanups } from './stack.js';

export interface RelayNodeProcess {
  /** The node's inbound SMTP port. */
  port: number;
  /** CPU time the node's process has used so far (user and system, µs; all its threads). */
  cpuUsage(): Promise<NodeJS.CpuUsage>;
  /** The same CPU time split by thread: main, compose workers (Linux; null elsewhere). */
  threadCpu(): Promise<ThreadCpu>;
  stop(): Promise<void>;
}

/**
 * `BENCH_RELAY_NODE_CPU_PROF=<dir>` runs each node with `node --cpu-prof` into
 * that directory (one `.cpuprofile` per process, written when it stops): the
 * node's main thread under the bench's load, for Chrome DevTools or speedscope.
 */
const cpuProfile = (): string[] => {
  const dir = process.env.BENCH_RELAY_NODE_CPU_PROF;
  return dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`] : [];
};

/**
 * Enrols a node with `key` (holding relay:write) into `stateDir` and starts it
 * with `settings` (SERVICE_*); `{error}` when it did not come up.
 */
export async function startRelayNodeProcess(
  edgeUrl: string, key: string, stateDir: string, settings: Record<string, string>,
): Promise<RelayNodeProcess | { error: string }> {
  const child = fork(new URL('./smtp-relay-node-child.ts', import.meta.url), [], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [...process.execArgv, ...cpuProfile()],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      if (child.connected) child.send('stop');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
  };
  cleanups.add(stop);
  const first = await new Promise<RelayNodeChildMessage | { exited: true }>((resolve) => {
    child.once('message', (m: RelayNodeChildMessage) => resolve(m));
    void exited.then(() => resolve({ exited: true }));
    child.send({ edgeUrl, key, stateDir, settings } satisfies RelayNodeChildStart);
  });
  const release = async () => { await stop(); cleanups.delete(stop); };
  const cpuUsage = () => new Promise<NodeJS.CpuUsage>((resolve, reject) => {
    if (!child.connected) { reject(new Error('the relay node process has exited')); return; }
    const answer = (m: RelayNodeChildMessage) => {
      if (!('cpu' in m)) return;
      child.off('message', answer);
      resolve(m.cpu);
    };
    child.on('message', answer);
    child.send('cpu');
  });
  const threadCpu = () => new Promise<ThreadCpu>((resolve, reject) => {
    if (!child.connected) { reject(new Error('the relay node process has exited')); return; }
    const answer = (m: RelayNodeChildMessage) => {
      if (!('threads' in m)) return;
      child.off('message', answer);
      resolve(m.threads);
    };
    child.on('message', answer);
    child.send('threads');
  });
  if ('port' in first) return { port: first.port, cpuUsage, threadCpu, stop: release };
  await release();
  return { error: 'error' in first ? first.error : 'its process exited before listening' };
}
