// Entry of the bench's relay node process: enrols at the edge with a project
// key holding relay:write, starts the node (listener, spool, forwarder) on a
// free loopback port, and reports the port over IPC. A process of its own, as
// a node runs in production: it never shares an event loop with the Neon
// bridge (in the bench process) or the load client. `stop` over IPC (or the
// parent going away) stops the node gracefully; `cpu` over IPC answers with
// the process's CPU time so far (process.cpuUsage: every thread of the node,
// its verification workers included).
import { loadConfig, type Config } from '@edgemail/shared';
import type { Log } from '../../relay-node/src/log.js';

/** What the bench uses of relay-node/src/index.ts. */
interface RelayNodeModule {
  enrollNode(o: { edgeUrl: string; key: string; stateDir: string; name?: string }): Promise<unknown>;
  startRelayNode(o: { stateDir: string; config: Config; port: number; host: string; hostName?: string; drainMs?: number; log?: Log }):
    Promise<{ port: number; stop(): Promise<void>; closed: Promise<Error | null> }>;
}
// Loaded at run time, not named to the compiler: the node is typechecked by its
// own package (its tsconfig differs from the bench's), and is still being built.
const NODE_MODULE = new URL('../../relay-node/src/index.ts', import.meta.url).href;

export interface RelayNodeChildStart {
  edgeUrl: string;
  key: string;
  stateDir: string;
  /** SERVICE_* settings, the stack's. */
  settings: Record<string, string>;
}

export type RelayNodeChildMessage = { port: number } | { error: string } | { stopped: string | null } | { cpu: NodeJS.CpuUsage };

const send = (m: RelayNodeChildMessage) => { if (process.connected) process.send!(m); };

// Warnings and errors only, each kind once: a run that goes wrong says so, not per message.
const said = new Set<string>();
const say = (level: string) => (message: string, fields?: Record<string, unknown>) => {
  if (said.has(message) || said.size >= 20) return;
  said.add(message);
  console.error(`  relay node ${level}: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''} (repeats not shown)`);
};
const log: Log = { info: () => {}, warn: say('warn'), error: say('error') };

process.once('message', (start: RelayNodeChildStart) => {
  (async () => {
    const { enrollNode, startRelayNode } = (await import(NODE_MODULE)) as RelayNodeModule;
    await enrollNode({ edgeUrl: start.edgeUrl, key: start.key, stateDir: start.stateDir, name: 'bench' });
    const node = await startRelayNode({
      stateDir: start.stateDir,
      config: loadConfig(start.settings).config,
      port: 0,
      host: '127.0.0.1',
      hostName: 'mx.bench.test',
      drainMs: 2000,
      log,
    });
    send({ port: node.port });
    const stop = () => void node.stop();
    process.on('message', (m) => {
      if (m === 'stop') stop();
      if (m === 'cpu') send({ cpu: process.cpuUsage() });
    });
    process.once('disconnect', stop);
    const reason = await node.closed;
    send({ stopped: reason ? reason.message : null });
    process.exit(0);
  })().catch((e: unknown) => {
    send({ error: e instanceof Error ? e.message : String(e) });
    process.exit(1);
  });
});
