// The node's metrics and health as one piece (`relay_node.metrics.*`): made
// before the edge client (whose fetch it watches), told about the node's parts
// once they exist, served over HTTP while the node runs.
import type { Config } from '@edgemail/shared';
import { Gauge } from 'prom-client';
import type { Log } from '../log.js';
import { NODE_VERSION } from '../version.js';
import { startMetricsServer, type MetricsServer, type Readiness } from './http.js';
import { watchEdge, type EdgeWatch } from './instrument.js';
import { createNodeMetrics, type MetricsSources, type NodeMetrics } from './node-metrics.js';

export interface Telemetry {
  readonly metrics: NodeMetrics;
  readonly edge: EdgeWatch;
  /** The node's parts the scrape reads; before this, they read as empty. */
  attach(sources: Omit<MetricsSources, 'edgeLastAnswerAgeSeconds' | 'edgeReachable'>): void;
  /** The edge's refusal of this node's relay contract (426), null while served: /readyz names it. */
  setContractRefusal(refusal: string | null): void;
  /** Listeners bound (true once all are open; false again when the node starts stopping). */
  setListening(listening: boolean): void;
  ready(): Readiness;
  /** Opens the HTTP listener; its port. */
  start(): Promise<number>;
  stop(): Promise<void>;
}

const EMPTY: Omit<MetricsSources, 'edgeLastAnswerAgeSeconds' | 'edgeReachable'> = {
  openSessions: () => ({}),
  spool: async () => ({ depth: 0, bytes: 0 }),
  deadLetters: () => ({ count: 0, bytes: 0 }),
  destinationConnections: () => [],
  servedCertificates: () => [],
};

/**
 * @example
 * const telemetry = createTelemetry(config, log, options.fetch);
 * const edge = createEdgeClient({ ..., fetch: telemetry.edge.fetch });
 */
export function createTelemetry(config: Config, log: Log, baseFetch?: typeof fetch, options: { port?: number } = {}): Telemetry {
  const windowMs = config['relay_node.metrics.ready_window'];
  let parts = EMPTY;
  let listening = false;
  let contractRefusal: string | null = null;
  let server: MetricsServer | null = null;
  // `metrics` is made just below; the watch counts into it only once requests are made.
  let metrics!: NodeMetrics;
  const edge = watchEdge((outcome) => metrics.edgeRequests.inc({ outcome }), baseFetch);
  const edgeAge = () => {
    const last = edge.lastAnswerAt();
    return last === null ? null : (Date.now() - last) / 1000;
  };
  const edgeReachable = () => {
    const age = edgeAge();
    return age !== null && age * 1000 <= windowMs;
  };
  metrics = createNodeMetrics({
    openSessions: () => parts.openSessions(),
    spool: () => parts.spool(),
    deadLetters: () => parts.deadLetters(),
    destinationConnections: () => parts.destinationConnections(),
    servedCertificates: () => parts.servedCertificates(),
    edgeLastAnswerAgeSeconds: edgeAge,
    edgeReachable,
  });
  // Which version each node runs (during a rolling upgrade: count by version).
  new Gauge({ name: 'edgemail_relay_info', help: 'Always 1; the node\'s version in its label.', labelNames: ['version'] as const, registers: [metrics.registry] }).set({ version: NODE_VERSION }, 1);
  const ready = (): Readiness => {
    if (!listening) return { ready: false, reason: server && parts !== EMPTY ? 'the SMTP listeners are closed (the node is stopping)' : 'the SMTP listeners are not bound yet (the node is starting)' };
    if (contractRefusal) return { ready: false, reason: `the edge refuses this node's relay contract: ${contractRefusal}` };
    const age = edgeAge();
    if (age === null) return { ready: false, reason: 'the edge has not answered this node yet' };
    if (!edgeReachable()) return { ready: false, reason: `the edge last answered ${Math.round(age)} s ago (relay_node.metrics.ready_window is ${windowMs / 1000} s)` };
    return { ready: true };
  };
  return {
    metrics,
    edge,
    attach(sources) { parts = sources; },
    setContractRefusal(refusal) { contractRefusal = refusal; },
    setListening(value) { listening = value; },
    ready,
    async start() {
      const host = config['relay_node.metrics.host'];
      const port = options.port ?? config['relay_node.metrics.port'];
      try {
        server = await startMetricsServer({ host, port, registry: metrics.registry, ready, log });
      } catch (err) {
        // A second node on the machine, or another exporter on 9465: say which setting moves it.
        throw new Error(`the metrics listener cannot listen on ${host}:${port} (relay_node.metrics.host, relay_node.metrics.port): ${(err as Error).message}`);
      }
      return server.port;
    },
    async stop() {
      await server?.close();
    },
  };
}
