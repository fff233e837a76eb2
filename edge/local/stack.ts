// The whole local stack in one call: embedded PostgreSQL (migrated), the Neon
// bridge and the Worker. `pnpm dev`, the tests and the benchmarks all use it.
import { loadConfig } from '@edgemail/shared';
import { runMigrations } from '@edgemail/schema/migrate';
import { startNeonBridge, type NeonBridge } from './neon-bridge.js';
import { startPostgres, type LocalPostgres } from './postgres.js';
import { startEdgeWorker, type EdgeWorker } from './edge-worker.js';
import { startLocalRelayNode } from './relay-node.js';
import { startLocalCron } from './cron.js';
import { startDevDns, type DevDns } from './dev-dns.js';
import type { RelayNode } from '../../relay-node/src/index.js';

export interface StackOptions {
  dataDir: string;
  pgPort: number;
  bridgePort?: number;
  workerPort?: number;
  database?: string;
  /** `SERVICE_*` settings for the Worker; validated before anything starts. */
  settings?: Record<string, string>;
  log?: (line: string) => void;
  logLevel?: 'none' | 'error' | 'warn' | 'info' | 'log' | 'debug';
  /** One relay node beside the Worker, enrolled on first start (state under `stateDir`). */
  relay?: { port: number; host: string; stateDir: string; submissionPort?: number };
  /**
   * Answer the edge's DNS questions locally for the registered domains (`dev-dns.ts`),
   * unless `SERVICE_DNS_DOH_URL` is set: `pnpm dev` has no Internet.
   */
  localDns?: boolean;
  /** Open the Worker's DevTools endpoint (`stack.worker.inspectorUrl`): benchmarks profile through it. */
  workerInspector?: boolean;
  /**
   * With `localDns`: also answer ordinary DNS (UDP and TCP) on this loopback port, and give it to the
   * relay node as `SERVICE_DNS_SERVERS` unless that is set. 0 picks a free port; none: DNS-over-HTTPS only.
   */
  dnsPort?: number;
  /** Stops the start (Ctrl-C): what has started is stopped and `StartAborted` thrown. */
  signal?: AbortSignal;
}

export interface Stack {
  url: string;
  databaseUrl: string;
  postgres: LocalPostgres;
  bridge: NeonBridge;
  worker: EdgeWorker;
  relay?: RelayNode;
  stop(): Promise<void>;
}

/** Settings from the environment, checked now so a bad value stops start-up. */
export function serviceSettings(env: NodeJS.ProcessEnv): Record<string, string> {
  const settings = Object.fromEntries(
    Object.entries(env).filter((e): e is [string, string] => e[0].startsWith('SERVICE_') && e[1] !== undefined),
  );
  loadConfig(settings);
  return settings;
}

/** The start was stopped (Ctrl-C) before it finished; what had started is stopped. */
export class StartAborted extends Error {
  constructor() { super('start-up stopped'); }
}

export async function startStack(opts: StackOptions): Promise<Stack> {
  const log = opts.log ?? (() => {});
  const database = opts.database ?? 'edgemail';
  loadConfig(opts.settings ?? {});
  // What has started so far, stopped in reverse order when a later step fails or the start is stopped.
  const undo: (() => Promise<void> | void)[] = [];
  const unwind = async () => {
    for (const stop of undo.splice(0).reverse()) await Promise.resolve().then(stop).catch(() => {});
  };
  const checkpoint = () => { if (opts.signal?.aborted) throw new StartAborted(); };

  try {
    checkpoint();
    const postgres = await startPostgres({ dataDir: `${opts.dataDir}/pg`, port: opts.pgPort, log });
    undo.push(() => postgres.stop());
    checkpoint();
    // A second start reuses it; one from an older version is handed to the application role.
    await postgres.createDatabase(database);
    // The application role (no superuser) owns the database, migrates it and
    // is all the Worker gets: a leaked URL cannot reach the server's programs.
    const databaseUrl = postgres.url(database);
    await runMigrations(databaseUrl);
    log(`postgres ready on 127.0.0.1:${postgres.port}, database ${database} migrated`);
    checkpoint();

    const bridge = await startNeonBridge({ port: opts.bridgePort ?? 0, pgHost: '127.0.0.1', pgPort: postgres.port, log });
    undo.push(() => bridge.close());
    checkpoint();
    const publicUrl = `http://127.0.0.1:${opts.workerPort ?? 8787}`;
    let dns: DevDns | undefined;
    if (opts.localDns && !opts.settings?.SERVICE_DNS_DOH_URL) {
      dns = await startDevDns({ databaseUrl, publicUrl: opts.settings?.SERVICE_SERVER_PUBLIC_URL ?? publicUrl, dnsPort: opts.dnsPort, log });
      const d = dns;
      undo.push(() => d.close());
      log(`local DNS (DNS-over-HTTPS) on ${dns.url}${dns.address ? `, ordinary DNS (UDP and TCP) on ${dns.address}` : ''}: answers for registered domains with the records they are told to publish`);
      checkpoint();
    }
    const worker = await startEdgeWorker({
      vars: {
        SERVICE_DATABASE_URL: databaseUrl,
        SERVICE_SERVER_PUBLIC_URL: publicUrl,
        ...(dns ? { SERVICE_DNS_DOH_URL: dns.url } : {}),
        ...opts.settings,
        LOCAL_NEON_BRIDGE: bridge.url,
      },
      port: opts.workerPort,
      persistTo: `${opts.dataDir}/wrangler`,
      logLevel: opts.logLevel,
      // The cron runner below fires the scheduled handler through it.
      testScheduled: true,
      inspector: opts.workerInspector ?? false,
    });
    undo.push(() => worker.stop());
    checkpoint();
    const cron = startLocalCron((c) => worker.scheduled(c), log);
    undo.push(() => cron.stop());
    let relay: RelayNode | undefined;
    if (opts.relay) {
      // The node checks inbound SPF/DKIM/DMARC against the records domain verification saw, unless told otherwise.
      const relaySettings = dns?.address && !opts.settings?.SERVICE_DNS_SERVERS
        ? { ...opts.settings, SERVICE_DNS_SERVERS: dns.address } : opts.settings ?? {};
      relay = await startLocalRelayNode({ ...opts.relay, edgeUrl: worker.url, databaseUrl, settings: relaySettings, log });
      const r = relay;
      // The node first: it drains its SMTP sessions while the edge can still take what they bring.
      undo.push(() => r.stop());
      checkpoint();
    }
    return {
      url: worker.url, databaseUrl, postgres, bridge, worker, relay,
      stop: unwind,
    };
  } catch (e) {
    await unwind();
    throw e;
  }
}
