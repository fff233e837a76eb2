// One relay node: its state, spool, domain list, certificate, SMTP listener(s),
// heartbeat, forwarder and outbound worker, started together and stopped together.
// Each direction starts in a file of its own (start-inbound.ts, start-submission.ts,
// start-outbound.ts); what they share (spool, domains, TLS, admission, metrics,
// health, heartbeat and the one stop) is composed here.
import { hostname } from 'node:os';
import { RELAY_CONTRACT_VERSION, type Config } from '@edgemail/shared';
import { createDnsResolver } from './inbound/mail-auth/index.js';
import { createConsoleLog } from './log.js';
import { createDomainCache } from './inbound/domain-cache.js';
import { createEdgeClient } from './edge/client.js';
import { watchContract } from './edge/contract-watch.js';
import { openDeadLetters } from './inbound/forwarder/dead-letters.js';
import { createHeartbeat } from './heartbeat.js';
import type { SpooledMeta } from './inbound/spool-store/spooled-message.js';
import type { ListenerReport } from '@edgemail/shared';
import { validateProxySettings } from './proxy/index.js';
import { listen, type RunningListener, type ServeListener } from './server.js';
import type { BoundedSmtpServer } from './smtp/index.js';
import type { Log } from './log.js';
import { openSpool } from './spool/index.js';
import { createSpoolAdmission, deadLetterCeiling, freeSpaceFloor } from './spool/admission.js';
import { domainsFile, readNodeState, spoolDir } from './state/index.js';
import { createListenerTls, type ListenerTls } from './tls/listener-tls.js';
import { startAcme, type AcmeOptions, type RunningAcme } from './tls/acme/index.js';
import { NODE_VERSION } from './version.js';
import { createTelemetry, instrumentSmtpServer, spoolFigures, type Telemetry } from './metrics/index.js';
import type { BackoffOptions } from './edge/backoff.js';
import { describeOutbound } from './outbound/index.js';
import { createInboundForwarder, openInbound } from './start-inbound.js';
import { createNodeOutbound, outboundHeloName, type RelayNodeOutboundOptions } from './start-outbound.js';
import { openSubmission } from './start-submission.js';

export type { RelayNodeOutboundOptions } from './start-outbound.js';

export interface RelayNodeOptions {
  /** Holds node.json (from `edgemail relay enroll`), domains.json and the spool. */
  stateDir: string;
  /** The settings (`loadConfig(process.env).config`): `relay_node.inbound.*`, `dns.servers`, `server.public_url`. */
  config: Config;
  /** Inbound (MX) port; 0 picks a free one. */
  port: number;
  /** Address to listen on. */
  host: string;
  /** An extra implicit-TLS inbound port (TLS from the first byte); none by default. */
  tlsPort?: number;
  /** The submission port (docs/submission.md); 0 picks a free one; none: no submission listener. */
  submissionPort?: number;
  /** An extra implicit-TLS submission port (RFC 8314, 465 in production); none by default. Needs `submissionPort`. */
  submissionTlsPort?: number;
  log?: Log;
  /** The name in the greeting, EHLO reply, Received and Authentication-Results. The host name by default. */
  hostName?: string;
  /** How long shutdown lets open SMTP sessions finish, ms. Default 10000. */
  drainMs?: number;
  /** Default 30000. */
  heartbeatIntervalMs?: number;
  /** Default 30000. */
  domainRefreshMs?: number;
  /** How long start-up waits for the edge's certificate before presenting a stand-in pair, ms. Default 10000. */
  tlsStartupTimeoutMs?: number;
  /** How often the certificate bundle is polled, ms. Default 15000 (tests shorten it). */
  tlsPollIntervalMs?: number;
  forwarder?: { concurrency?: number; idlePollMs?: number; backoff?: BackoffOptions };
  /**
   * Outbound delivery (claim from the edge, deliver, report; `outbound.*`
   * settings): on by default; `false` leaves it off (nodes that only test
   * inbound mail).
   */
  outbound?: false | RelayNodeOutboundOptions;
  /** Test overrides of ACME (`acme.*` settings otherwise; started when `acme.enabled`). */
  acme?: AcmeOptions;
  /** The metrics listener's port over `relay_node.metrics.port` (0 picks a free one); only with `relay_node.metrics.enabled`. */
  metricsPort?: number;
  fetch?: typeof fetch;
  /** Tests only: the relay contract named to the edge, to play a node of another release (RELAY_CONTRACT_VERSION otherwise). */
  contract?: number;
}

export interface RelayNode {
  readonly nodeId: string;
  readonly edgeUrl: string;
  /** The bound inbound port. */
  readonly port: number;
  readonly tlsPort: number | null;
  /** The bound submission port, null without a submission listener. */
  readonly submissionPort: number | null;
  readonly submissionTlsPort: number | null;
  readonly spoolDir: string;
  /** ACME (docs/acme.md) when `acme.enabled`: its http-01 port and the manager (`checkNow`). */
  readonly acme: RunningAcme | null;
  /** The metrics and health listener's port (`relay_node.metrics.enabled`), else null. */
  readonly metricsPort: number | null;
  /**
   * Graceful stop: no new connections, sessions drained (bounded), forwarding
   * stopped (the spool keeps the rest), outbound claims stopped and the
   * deliveries in flight finished (bounded) and reported.
   */
  stop(): Promise<void>;
  /** Settles once the node has stopped: null after stop(), the reason when it stopped itself (revoked). */
  readonly closed: Promise<Error | null>;
}

/**
 * Starts the node from its state directory. Throws NotEnrolledError without
 * node.json, a ConfigError for bad PROXY settings, and NodeRevokedError when
 * the edge already refuses the credential at start-up.
 *
 * @example
 * const node = await startRelayNode({ stateDir, config: loadConfig(process.env).config, port: 2525, host: '0.0.0.0' });
 * process.on('SIGTERM', () => node.stop());
 * const reason = await node.closed; // an Error when the edge revoked the node
 */
export async function startRelayNode(options: RelayNodeOptions): Promise<RelayNode> {
  const { config } = options;
  // The edge's refusal of this node's relay contract is said once (contract-watch.ts): every part logs through it.
  const contract = watchContract(options.log ?? createConsoleLog('relay', { level: config['relay_node.log_level'] }),
    (refusal) => telemetry?.setContractRefusal(refusal), { contract: options.contract ?? RELAY_CONTRACT_VERSION, version: NODE_VERSION });
  const log = contract.log;
  const hostName = options.hostName ?? hostname();
  const proxyEnabled = config['relay_node.inbound.proxy_protocol.enabled'];
  const trusted = config['relay_node.inbound.proxy_protocol.trusted'];
  validateProxySettings(proxyEnabled, trusted, 'relay_node.inbound');
  // Refused here, before anything opens, when it is not a fully qualified name (helo-name.ts).
  const heloName = outboundHeloName(config, options.outbound);
  const tlsEnabled = config['relay_node.inbound.tls.enabled'];
  const submissionOn = options.submissionPort !== undefined;
  const submissionProxy = config['submission.proxy_protocol.enabled'];
  const submissionTrusted = config['submission.proxy_protocol.trusted'];
  if (submissionOn) validateProxySettings(submissionProxy, submissionTrusted, 'submission');
  const submissionTlsEnabled = submissionOn && config['submission.tls.enabled'];

  const state = await readNodeState(options.stateDir);
  // Metrics and health (docs/operations.md): it watches every request to the edge, so it comes first.
  const telemetry: Telemetry | null = config['relay_node.metrics.enabled'] ? createTelemetry(config, log, options.fetch, { port: options.metricsPort }) : null;
  const metrics = telemetry?.metrics;
  const edge = createEdgeClient({
    url: state.edge_url, token: state.token, version: NODE_VERSION, fetch: telemetry?.edge.fetch ?? options.fetch,
    contract: options.contract, onContract: contract.onContract,
  });
  const spool = await openSpool<SpooledMeta>(spoolDir(options.stateDir));
  const deadLetters = await openDeadLetters(spool);

  let fatal: Error | null = null;
  let stopping: Promise<void> | null = null;
  let resolveClosed!: (reason: Error | null) => void;
  const closed = new Promise<Error | null>((resolve) => {
    resolveClosed = resolve;
  });
  const onFatal = (err: Error) => {
    if (fatal || stopping) return;
    fatal = err;
    log.error('the edge no longer accepts this node; stopping', { node: state.node_id, error: err.message });
    void stop();
  };

  // One resolver (`dns.servers`, answers cached) for the ingest checks and the MX lookups.
  const resolve = createDnsResolver(config['dns.servers']);
  const { settings: outboundSettings, worker: outbound, transports } = createNodeOutbound(options.outbound, { config, edge, resolve, heloName, log, onFatal, metrics });

  const domains = createDomainCache({ fetchDomains: (signal) => edge.domains(signal), file: domainsFile(options.stateDir), log, refreshIntervalMs: options.domainRefreshMs });
  let tls: ListenerTls | null = null;
  const forwarder = createInboundForwarder({ config, spool, deadLetters, edge, log, onFatal, metrics, overrides: options.forwarder });
  // Whether the spool can take new mail now (452 4.3.1 while not), for every listener.
  const admission = createSpoolAdmission({
    conditions: [
      freeSpaceFloor({ dir: spool.dir, minFreeBytes: config['relay_node.spool.min_free_bytes'] }),
      deadLetterCeiling({ deadLetters, maxBytes: config['relay_node.spool.max_dead_letter_bytes'] }),
    ],
    log,
  });
  let acme: RunningAcme | null = null;
  /** Mail comes first: a responder that cannot listen (port 80 taken) leaves ACME off on this node, said at error level. */
  async function startAcmeOrSayWhy(): Promise<RunningAcme | null> {
    try {
      return await startAcme({ config, edge, stateDir: options.stateDir, host: options.host, log, onFatal, options: options.acme });
    } catch (err) {
      log.error('acme could not start; this node orders no certificates (others may)', { error: (err as Error).message, http_port: options.acme?.httpPort ?? config['acme.http_port'] });
      return null;
    }
  }
  const servers: BoundedSmtpServer[] = [];
  const closers: (() => Promise<void>)[] = [];
  const listeners: RunningListener[] = [];
  const reports: ListenerReport[] = [];
  /** Each TLS listener's report names what it presents (docs/relay-protocol.md, heartbeat). */
  const withCertificate = (report: ListenerReport): ListenerReport =>
    (tls && report.tls !== 'off' ? { ...report, certificate: tls.presented(report.name) } : report);
  /** The node-wide `tls` (older edges read only this): the inbound listener's, else the submission one's. */
  const nodeTlsReport = () => {
    if (!tls) return { source: 'none', not_after: null };
    return tls.report(tlsEnabled ? 'inbound' : 'submission');
  };
  const heartbeat = createHeartbeat({
    edge,
    log,
    onFatal,
    onDomainsVersion: (version) => domains.noteVersion(version),
    onRecovered: () => {
      forwarder.resume();
      outbound?.resume();
    },
    intervalMs: options.heartbeatIntervalMs,
    report: async () => {
      // Recounted each beat: an operator may have cleared dead/ by hand.
      const dead = await deadLetters.refresh();
      return {
        version: NODE_VERSION, listeners: reports.map(withCertificate), tls: nodeTlsReport(), spool_depth: await spool.depth(),
        dead_letters: dead.count, dead_letter_bytes: dead.bytes,
      };
    },
  });

  async function stop(): Promise<void> {
    stopping ??= (async () => {
      telemetry?.setListening(false);
      // Submissions waiting on the edge are answered 451 (the client sends them again) rather than held.
      submissionStopping.abort();
      heartbeat.stop();
      domains.stop();
      await acme?.stop().catch(() => undefined);
      // Deliveries in flight finish (and are reported) while the listeners drain.
      const outboundStopped = outbound?.stop();
      await Promise.all(listeners.map((l) => l.close(options.drainMs ?? 10_000)));
      await forwarder.stop();
      await outboundStopped;
      // Idle delivery sessions end with QUIT (bounded), not a dropped connection.
      await transports?.stop();
      tls?.stop();
      log.info('relay node stopped', { node: state.node_id, spool_depth: await spool.depth().catch(() => -1) });
      await spool.close().catch(() => undefined);
      for (const close of closers) await close().catch(() => undefined);
      await telemetry?.stop();
      resolveClosed(fatal);
    })();
    return stopping;
  }

  const submissionStopping = new AbortController();
  /** What a handshake on `listener` was answered with (docs/listeners.md), as a word: never the name asked for. */
  const certificateSource = (listener: string, servername: string | undefined): string => {
    const presented = tls?.presented(listener);
    if (!presented) return 'none';
    if (presented.source !== 'assigned' && servername && config['acme.enabled'] && config['acme.hosts'].includes(servername.toLowerCase())) return 'acme';
    return presented.source;
  };
  const serverListeners = new Map<BoundedSmtpServer, string>();
  /** Each direction's ports open through here: counted in the metrics and open sessions, named in the heartbeat. */
  const serve: ServeListener = async (server, listener, port, proxy, report) => {
    if (metrics) instrumentSmtpServer(metrics, listener, server, (sni) => certificateSource(listener, sni));
    servers.push(server);
    serverListeners.set(server, listener);
    const running = await listen(server, { port, host: options.host, proxy, log });
    listeners.push(running);
    reports.push(report(running.port));
    return running;
  };
  telemetry?.attach({
    openSessions: () => {
      const open: Record<string, number> = { inbound: 0, ...(submissionOn ? { submission: 0 } : {}) };
      for (const [server, listener] of serverListeners) open[listener] = (open[listener] ?? 0) + server.connections.size;
      return open;
    },
    spool: () => spoolFigures(spool.dir),
    deadLetters: () => deadLetters.tally(),
    destinationConnections: () => transports?.destinationConnections() ?? [],
    servedCertificates: () => (tls ? [...new Set(reports.filter((r) => r.tls !== 'off').map((r) => r.name))].map((listener) => {
      const presented = tls!.presented(listener);
      return { listener, source: presented.source, notAfterMs: presented.not_after ? Date.parse(presented.not_after) : null };
    }) : []),
  });

  try {
    // Up first, so /readyz says "starting" while the rest comes up; a taken port stops the start.
    const metricsPort = telemetry ? await telemetry.start() : null;
    await domains.start();
    if (tlsEnabled || submissionTlsEnabled) {
      tls = createListenerTls({
        edge, publicUrl: config['server.public_url'], log, onFatal, startupTimeoutMs: options.tlsStartupTimeoutMs,
        acme: { enabled: config['acme.enabled'], hosts: config['acme.hosts'] }, pollIntervalMs: options.tlsPollIntervalMs,
      });
      await tls.start();
    }
    const { inbound, implicit } = await openInbound({
      config, hostName, port: options.port, tlsPort: options.tlsPort, drainMs: options.drainMs, tls, domains, spool, forwarder, resolve,
      admission: admission.refusal, log, metrics, serve,
    });
    const submission = submissionOn
      ? await openSubmission({
        config, stateDir: options.stateDir, port: options.submissionPort!, tlsPort: options.submissionTlsPort, hostName, drainMs: options.drainMs, edge, tls,
        admission: admission.refusal, stopping: submissionStopping.signal, log, metrics, serve, onClose: (close) => closers.push(close),
      })
      : null;
    forwarder.start();
    heartbeat.start();
    outbound?.start();
    telemetry?.setListening(true);
    if (config['acme.enabled']) acme = await startAcmeOrSayWhy();
    log.info('relay node started', {
      node: state.node_id, edge: state.edge_url, inbound: `${options.host}:${inbound.port}`,
      ...(implicit ? { inbound_tls: `${options.host}:${implicit.port}` } : {}),
      ...(submission ? { submission: `${options.host}:${submission.port}`, ...(submission.tlsPort !== null ? { submission_tls: `${options.host}:${submission.tlsPort}` } : {}) } : {}),
      tls: tlsEnabled ? 'starttls' : 'off', proxy_protocol: proxyEnabled, spool_depth: await spool.depth(), domains: domains.size,
      ...(metricsPort !== null ? { metrics: `${config['relay_node.metrics.host']}:${metricsPort}` } : {}),
      outbound: outbound ? describeOutbound(outboundSettings) : 'off',
    });
    return {
      nodeId: state.node_id,
      edgeUrl: state.edge_url,
      port: inbound.port,
      tlsPort: implicit?.port ?? null,
      submissionPort: submission?.port ?? null,
      submissionTlsPort: submission?.tlsPort ?? null,
      spoolDir: spool.dir,
      acme,
      metricsPort,
      stop,
      closed,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}
