// Runs the edge Worker under wrangler's local runtime (workerd, with real
// Durable Objects and R2), with settings passed as plain-text bindings.
import { fileURLToPath } from 'node:url';
import { unstable_startWorker } from 'wrangler';

// No network here: skip fetching Cloudflare's `Request.cf` sample and metrics.
process.env.CLOUDFLARE_CF_FETCH_ENABLED ??= 'false';
process.env.WRANGLER_SEND_METRICS ??= 'false';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

export interface EdgeWorker {
  url: string;
  stop(): Promise<void>;
}

export async function startEdgeWorker(opts: {
  vars: Record<string, string>;
  port?: number;
  /** Where Durable Object and R2 state is kept; false keeps it in memory. */
  persistTo: string | false;
  logLevel?: 'none' | 'error' | 'warn' | 'info' | 'log' | 'debug';
  /** Serve `/__scheduled?cron=…` to run the scheduled handler (tests). */
  testScheduled?: boolean;
}): Promise<EdgeWorker> {
  const worker = await unstable_startWorker({
    config: `${repoRoot}wrangler.toml`,
    bindings: Object.fromEntries(Object.entries(opts.vars).map(([k, v]) => [k, { type: 'plain_text', value: v }])),
    sendMetrics: false,
    dev: {
      server: { hostname: '127.0.0.1', port: opts.port ?? 0 },
      persist: opts.persistTo,
      inspector: false,
      watch: false,
      testScheduled: opts.testScheduled ?? false,
      logLevel: opts.logLevel ?? 'warn',
    },
  });
  await worker.ready;
  const url = (await worker.url).origin;
  return { url, stop: () => worker.dispose() };
}
