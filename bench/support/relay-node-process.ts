// A relay node in a child process (smtp-relay-node-child.ts), as a node runs
// in production: it never shares an event loop with the Neon bridge (in the
// bench process) or the load client.
import { fork } from 'node:child_process';
import type { RelayNodeChildMessage, RelayNodeChildStart } from './smtp-relay-node-child.js';
import { cleanups } from './stack.js';

export interface RelayNodeProcess {
  /** The node's inbound SMTP port. */
  port: number;
  stop(): Promise<void>;
}

/**
 * Enrols a node with `key` (holding relay:write) into `stateDir` and starts it
 * with `settings` (SERVICE_*); `{error}` when it did not come up.
 */
export async function startRelayNodeProcess(
  edgeUrl: string, key: string, stateDir: string, settings: Record<string, string>,
): Promise<RelayNodeProcess | { error: string }> {
  const child = fork(new URL('./smtp-relay-node-child.ts', import.meta.url), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
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
  if ('port' in first) return { port: first.port, stop: release };
  await release();
  return { error: 'error' in first ? first.error : 'its process exited before listening' };
}
