// The outbound direction's start-up (docs/outbound.md): the worker that claims
// jobs from the edge, delivers them and reports, with what its deliveries share
// (sessions per destination, the composition of each message, the threads that
// compose and sign). node.ts starts and stops it with the rest.
import type { Config } from '@edgemail/shared';
import type { BackoffOptions } from './edge/backoff.js';
import type { EdgeClient } from './edge/client.js';
import type { createDnsResolver } from './inbound/mail-auth/index.js';
import type { Log } from './log.js';
import { countOutbound, type NodeMetrics } from './metrics/index.js';
import {
  ComposedMessages, composeThreadsFor, createComposePool, createOutboundWorker, heloNameFromConfig, processJob, routeSettingsFromConfig, TransportPool,
  type ComposePool, type DeliveryTimeouts, type OutboundWorker, type RouteSettings,
} from './outbound/index.js';

/** Overrides of the outbound worker's defaults (tests shorten them). */
export interface RelayNodeOutboundOptions {
  /** Deliveries at once; `outbound.concurrency` by default. */
  concurrency?: number;
  /** With nothing claimed, ask the edge again after this long, ms. Default 1000. */
  idlePollMs?: number;
  /** Waits after the edge failed a claim or a report. */
  backoff?: BackoffOptions;
  /** SMTP time limits (connect, greeting, idle), ms. */
  timeouts?: Partial<DeliveryTimeouts>;
  /** How long stop() lets deliveries in flight finish before interrupting them, ms. Default 30000. */
  stopTimeoutMs?: number;
}

/**
 * The name in the outbound EHLO: refused here, before anything opens, when it
 * is not a fully qualified name (helo-name.ts); '' when outbound is off.
 */
export const outboundHeloName = (config: Config, outbound: false | RelayNodeOutboundOptions | undefined): string =>
  (outbound === false ? '' : heloNameFromConfig(config));

export interface OutboundStartDeps {
  config: Config;
  edge: EdgeClient;
  /** The node's one resolver (`dns.servers`), shared with the inbound checks. */
  resolve: ReturnType<typeof createDnsResolver>;
  heloName: string;
  log: Log;
  onFatal: (err: Error) => void;
  metrics?: NodeMetrics;
}

export interface NodeOutbound {
  /** `outbound.*` routing, read whether or not outbound is on. */
  settings: RouteSettings;
  /** Null when outbound is off (`outbound: false`). */
  worker: OutboundWorker | null;
  /** Sessions kept per destination; null when outbound is off. */
  transports: TransportPool | null;
  /** The threads that compose and sign (closed when the worker has stopped); null when outbound is off. */
  composer: ComposePool | null;
}

/**
 * Builds the outbound worker (not started: `worker.start()`), or none when
 * `options` is false.
 *
 * @example
 * const outbound = createNodeOutbound(options.outbound, { config, edge, resolve, heloName, log, onFatal });
 * outbound.worker?.start();
 */
export function createNodeOutbound(options: false | RelayNodeOutboundOptions | undefined, deps: OutboundStartDeps): NodeOutbound {
  const { config, edge, resolve, heloName, log, onFatal, metrics } = deps;
  const outboundSettings = routeSettingsFromConfig(config);
  const outboundOptions = options === false ? null : options ?? {};
  // Sessions reused per destination (as an MTA's connection cache): one per message costs a handshake each.
  const transports = outboundOptions ? new TransportPool({ connectionsPerDestination: config['outbound.max_sessions_per_destination'] }) : null;
  // The recipients of one message share its composition and signature.
  const composed = new ComposedMessages();
  // Composing and signing in worker threads: this thread keeps the sessions and the edge's calls moving.
  const composer = outboundOptions ? createComposePool({ size: composeThreadsFor(config['outbound.compose_threads']), log }) : null;
  const outboundCalls = outboundOptions && {
    claim: (max: number, signal: AbortSignal) => edge.claimOutbound(max, signal),
    report: (results: Parameters<typeof edge.reportOutbound>[0], signal: AbortSignal) => edge.reportOutbound(results, signal),
    deliver: (job: Parameters<typeof processJob>[0], signal: AbortSignal) => processJob(job, { settings: outboundSettings, resolve, hostName: heloName, log, timeouts: outboundOptions.timeouts, transports: transports ?? undefined, composed, compose: composer?.compose }, signal),
  };
  const loop: OutboundWorker | null = outboundOptions && outboundCalls && createOutboundWorker({
    ...(metrics ? countOutbound(metrics, outboundCalls) : outboundCalls),
    // The leases of the jobs held are renewed while this node is alive (lease-keeper.ts).
    renew: (leases, signal) => edge.renewOutbound(leases, signal),
    log,
    onFatal,
    concurrency: outboundOptions.concurrency ?? config['outbound.concurrency'],
    idlePollMs: outboundOptions.idlePollMs,
    backoff: outboundOptions.backoff,
    stopTimeoutMs: outboundOptions.stopTimeoutMs,
  });
  // The threads go once the last delivery has its bytes: stop() lets those in flight finish first.
  let stopped = false;
  const worker: OutboundWorker | null = loop && {
    // Claims start once the compose threads have loaded: a job claimed before would spend its lease waiting.
    start: () => {
      void (composer?.warm() ?? Promise.resolve()).then(() => {
        if (!stopped) loop.start();
      });
    },
    resume: () => loop.resume(),
    stop: async () => {
      stopped = true;
      await loop.stop();
      await composer?.close();
    },
    get inFlight() {
      return loop.inFlight;
    },
    get unreported() {
      return loop.unreported;
    },
  };
  return { settings: outboundSettings, worker, transports, composer };
}
