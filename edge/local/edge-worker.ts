// Runs the edge Worker under wrangler's local runtime (workerd, with real
// Durable Objects and R2), with settings passed as plain-text bindings.
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { unstable_startWorker } from 'wrangler';
import { LOCAL_SCHEDULED_HEADER, LOCAL_SCHEDULED_PATH } from '../src/local-scheduled.js';
import { WebSocket } from 'ws';
import { ensureConsoleExists } from './console-build.js';

// No network here: skip fetching Cloudflare's `Request.cf` sample and metrics.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= 'false';
process.env.WRANGLER_SEND_METRICS ??= 'false';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface EdgeWorker {
  url: string;
  /** The Worker's DevTools endpoint (`ws://…/ws`), when started with `inspector` or `onLog`. */
  inspectorUrl?: string;
  /**
   * Runs the cron `cron` (`17 * * * *`, …) once, through the Worker's local
   * trigger, and answers its status once every job settled (200, 500 on a
   * failed job). Only for a Worker started with `testScheduled`.
   */
  scheduled(cron: string): Promise<number>;
  stop(): Promise<void>;
}

/** One console call (or uncaught exception) of the Worker. */
export interface WorkerLog {
  /** The console method (`log`, `warning`, `error`, …), or `exception`. */
  level: string;
  /** The arguments as the console would print them, space separated. */
  message: string;
}

export async function startEdgeWorker(opts: {
  vars: Record<string, string>;
  port?: number;
  /** Where Durable Object and R2 state is kept; false keeps it in memory. */
  persistTo: string | false;
  logLevel?: 'none' | 'error' | 'warn' | 'info' | 'log' | 'debug';
  /** Let `scheduled()` run the scheduled handler (the local cron runner, tests): see edge/src/index.ts, localScheduledTrigger. */
  testScheduled?: boolean;
  /**
   * Receives every console call of this Worker, whatever `logLevel` prints.
   * Read through the Worker's inspector: wrangler's own log output is one
   * stream for every Worker in the process, so it cannot tell two apart.
   */
  onLog?: (entry: WorkerLog) => void;
  /** Open the DevTools endpoint (benchmarks profile the Worker through it). */
  inspector?: boolean;
}): Promise<EdgeWorker> {
  const inspect = opts.inspector === true || opts.onLog !== undefined;
  // wrangler.toml serves the console's build as assets; wrangler refuses to start without the folder.
  ensureConsoleExists();
  // A secret of this start: nothing else on loopback can run the crons.
  const scheduledSecret = opts.testScheduled ? randomBytes(24).toString('base64url') : undefined;
  const vars = scheduledSecret ? { ...opts.vars, LOCAL_SCHEDULED_SECRET: scheduledSecret } : opts.vars;
  const worker = await unstable_startWorker({
    config: `${repoRoot}wrangler.toml`,
    bindings: Object.fromEntries(Object.entries(vars).map(([k, v]) => [k, { type: 'plain_text', value: v }])),
    sendMetrics: false,
    dev: {
      server: { hostname: '127.0.0.1', port: opts.port ?? 0 },
      persist: opts.persistTo,
      inspector: inspect ? { hostname: '127.0.0.1', port: 0 } : false,
      watch: false,
      logLevel: opts.logLevel ?? 'warn',
    },
  });
  await readyOrFailed(worker);
  const url = (await worker.url).origin;
  let inspector: WebSocket | undefined;
  let endpoint: string | undefined;
  if (inspect) {
    try {
      const inspectorUrl = await worker.inspectorUrl;
      if (!inspectorUrl) throw new Error('the Worker started without an inspector');
      endpoint = `ws://${inspectorUrl.host}/ws`;
      if (opts.onLog) inspector = await followConsole(endpoint, opts.onLog);
    } catch (e) {
      await worker.dispose();
      throw e;
    }
  }
  return {
    url,
    ...(endpoint ? { inspectorUrl: endpoint } : {}),
    async scheduled(cron: string) {
      if (!scheduledSecret) throw new Error('start the Worker with testScheduled to run its crons');
      const res = await fetch(`${url}${LOCAL_SCHEDULED_PATH}?cron=${encodeURIComponent(cron)}`, {
        method: 'POST', headers: { [LOCAL_SCHEDULED_HEADER]: scheduledSecret },
      });
      await res.arrayBuffer();
      return res.status;
    },
    async stop() {
      inspector?.close();
      await worker.dispose();
    },
  };
}

/**
 * Waits for the Worker, failing on the first error wrangler reports while it
 * starts: a taken port (EADDRINUSE) leaves `ready` pending for ever, the
 * error going to the DevEnv's `error` event alone. A Worker that failed is
 * torn down here (`dispose()` would wait for that `ready` too).
 */
async function readyOrFailed(worker: Awaited<ReturnType<typeof unstable_startWorker>>): Promise<void> {
  const devEnv = worker.raw;
  let onError!: (event: unknown) => void;
  const failed = new Promise<never>((_, reject) => {
    onError = (event) => reject(startError(event));
    devEnv.on('error', onError);
  });
  try {
    await Promise.race([worker.ready, failed]);
  } catch (e) {
    await devEnv.teardown().catch(() => {});
    throw e;
  } finally {
    devEnv.off('error', onError);
  }
}

/** An Error from what the DevEnv reports: an Error itself, or `{ source, reason, cause }`. */
function startError(event: unknown): Error {
  if (event instanceof Error) return event;
  const { reason, cause } = event as { reason?: string; cause?: unknown };
  const error = new Error(`${reason ?? 'the Worker failed to start'}${cause instanceof Error ? `: ${cause.message}` : ''}`, { cause });
  if (cause && typeof cause === 'object' && 'code' in cause) Object.assign(error, { code: (cause as { code: unknown }).code });
  return error;
}

interface RemoteObject { type: string; value?: unknown; description?: string; unserializableValue?: string }

const printed = (arg: RemoteObject) =>
  arg.type === 'string' ? String(arg.value)
    : arg.unserializableValue ?? arg.description ?? (arg.value === undefined ? arg.type : JSON.stringify(arg.value));

/**
 * Connects to the Worker's DevTools endpoint (wrangler's inspector proxy,
 * which replays what the runtime said before the connection) and hands on
 * console calls and uncaught exceptions.
 */
function followConsole(endpoint: string, onLog: (entry: WorkerLog) => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(endpoint);
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data)) as { method?: string; params?: any };
      if (msg.method === 'Runtime.consoleAPICalled') {
        onLog({ level: msg.params.type, message: (msg.params.args as RemoteObject[]).map(printed).join(' ') });
      } else if (msg.method === 'Runtime.exceptionThrown') {
        const details = msg.params.exceptionDetails;
        onLog({ level: 'exception', message: details.exception?.description ?? details.text });
      }
    });
    ws.once('open', () => {
      // The proxy enables the Network domain for DevTools; its events (one per
      // subrequest) are of no use here, and each costs the proxy a round trip.
      ws.send(JSON.stringify({ id: 1, method: 'Network.disable' }));
      resolve(ws);
    });
    // Before the connection opens an error fails the start; after, the Worker is going away.
    ws.on('error', reject);
  });
}
