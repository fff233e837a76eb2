// Entry of `bench submission`'s relay node process: enrols with a project key
// holding relay:write, starts the node with its submission listener on a free
// loopback port (outbound delivery to the smarthost the settings name), and
// reports the port over IPC. A process of its own, as a node runs in
// production: it shares no event loop with the Neon bridge or the load client.
// `stop` over IPC (or the parent going away) stops it.
import { loadConfig, type Config } from '@edgemail/shared';
import type { Log } from '../relay-node/src/log.js';

/** What the bench uses of relay-node/src/index.ts. */
interface RelayNodeModule {
  enrollNode(o: { edgeUrl: string; key: string; stateDir: string; name?: string }): Promise<unknown>;
  startRelayNode(o: { stateDir: string; config: Config; port: number; submissionPort: number; host: string; hostName?: string; drainMs?: number; log?: Log }):
    Promise<{ submissionPort: number | null; stop(): Promise<void>; closed: Promise<Error | null> }>;
}
// Loaded at run time, as bench/support/smtp-relay-node-child.ts does: the node is typechecked by its own package.
const NODE_MODULE = new URL('../relay-node/src/index.ts', import.meta.url).href;

export interface SubmissionNodeStart { edgeUrl: string; key: string; stateDir: string; settings: Record<string, string> }
export type SubmissionNodeMessage = { port: number } | { error: string } | { cpu: NodeJS.CpuUsage };

const send = (m: SubmissionNodeMessage) => { if (process.connected) process.send!(m); };

// Warnings and errors only, each kind once.
const said = new Set<string>();
const say = (level: string) => (message: string, fields?: Record<string, unknown>) => {
  if (said.has(message) || said.size >= 20) return;
  said.add(message);
  console.error(`  relay node ${level}: ${message}${fields ? ` ${JSON.stringify(fields)}` : ''} (repeats not shown)`);
};
const log: Log = { info: () => {}, warn: say('warn'), error: say('error') };

process.once('message', (start: SubmissionNodeStart) => {
  (async () => {
    const { enrollNode, startRelayNode } = (await import(NODE_MODULE)) as RelayNodeModule;
    await enrollNode({ edgeUrl: start.edgeUrl, key: start.key, stateDir: start.stateDir, name: 'bench-submission' });
    const node = await startRelayNode({
      stateDir: start.stateDir, config: loadConfig(start.settings).config, port: 0, submissionPort: 0, host: '127.0.0.1',
      hostName: 'mx.bench.test', drainMs: 2000, log,
    });
    send({ port: node.submissionPort! });
    const stop = () => void node.stop();
    process.on('message', (m) => {
      if (m === 'stop') stop();
      if (m === 'cpu') send({ cpu: process.cpuUsage() });
    });
    process.once('disconnect', stop);
    await node.closed;
    process.exit(0);
  })().catch((e: unknown) => {
    send({ error: e instanceof Error ? e.message : String(e) });
    process.exit(1);
  });
});
