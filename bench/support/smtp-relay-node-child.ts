// Entry of the bench's relay node process: enrols at the edge with a project
// key holding relay:write, starts the node (listener, spool, forwarder) on a
// free loopback port, and reports the port over IPC. A process of its own, as
// a node runs in production: it never shares an event loop with the Neon
// bridge (in the bench process) or the load client. `stop` over IPC (or the
// parent going away) stops the node gracefully; `cpu` over IPC answers with
// the process's CPU time so far (process.cpuUsage: every thread of the node,
// its verification workers included); `threads` with that time split by
// thread (Linux: /proc/self/task): the main thread, the compose workers, the rest.
import { readdirSync, readFileSync } from 'node:fs';
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
// The same module instance the node loads (one URL, one instance): its compose workers' thread ids.
const COMPOSE_POOL_MODULE = new URL('../../relay-node/src/outbound/compose-pool.ts', import.meta.url).href;

export interface RelayNodeChildStart {
  edgeUrl: string;
  key: string;
  stateDir: string;
  /** SERVICE_* settings, the stack's. */
  settings: Record<string, string>;
}

/**
 * CPU time (user + system, µs) so far: the whole process, its main thread, its compose worker threads (null
 * where /proc is missing), and every thread by id (what "other" is made of: libuv's pool, V8's helpers, the
 * module loader's thread).
 */
export interface ThreadCpu { total: number; main: number | null; compose: number | null; byThread: Record<string, number>; mainTid: number; composeTids: number[] }

export type RelayNodeChildMessage = { port: number } | { error: string } | { stopped: string | null } | { cpu: NodeJS.CpuUsage } | { threads: ThreadCpu };

/** A thread's utime + stime from /proc/self/task/<tid>/stat, µs (clock ticks of 10 ms); null when unreadable. */
function threadMicros(tid: number): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    // The fields after the command name (which may hold spaces) in parentheses; utime and stime are the 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return null;
  }
}

async function threadCpu(): Promise<ThreadCpu> {
  const usage = process.cpuUsage();
  const { composeThreadIds } = (await import(COMPOSE_POOL_MODULE)) as { composeThreadIds(): number[] };
  const composeTids = composeThreadIds();
  const compose = composeTids.map(threadMicros);
  let tids: string[] = [];
  try {
    tids = readdirSync('/proc/self/task');
  } catch { /* not Linux */ }
  return {
    total: usage.user + usage.system,
    byThread: Object.fromEntries(tids.map((t) => [t, threadMicros(Number(t)) ?? 0])),
    mainTid: process.pid,
    composeTids,
    main: threadMicros(process.pid),
    compose: compose.some((t) => t === null) ? null : compose.reduce<number>((a, b) => a + b!, 0),
  };
}

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
      if (m === 'threads') void threadCpu().then((threads) => send({ threads }));
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
