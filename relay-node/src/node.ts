// One relay node: its state, spool, domain list, certificate, SMTP listener(s),
// heartbeat, forwarder and outbound worker, started together and stopped together.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { RELAY_CONTRACT_VERSION, type Config } from '@edgemail/shared';
import { createAuthenticator, createDnsResolver } from './inbound/mail-auth/index.js';
import { createConsoleLog } from './log.js';
import { createDomainCache } from './inbound/domain-cache.js';
import { createEdgeClient } from './edge/client.js';
import { watchContract } from './edge/contract-watch.js';
import { openDeadLetters } from './inbound/forwarder/dead-letters.js';
import { createForwarder } from './inbound/forwarder/forwarder.js';
import { createHeartbeat } from './heartbeat.js';
import { createSpoolStore, ingestTransforms } from './inbound/spool-store/spool-store.js';
import type { SpooledMeta } from './inbound/spool-store/spooled-message.js';
import type { ListenerReport } from '@edgemail/shared';
import { validateProxySettings } from './proxy/index.js';
import { listen, type RunningListener } from './server.js';
import { createInboundServer, createSessionSlots, inboundOptionsFromConfig, type InboundSmtpServer } from './inbound/listener/index.js';
import type { InboundDeps } from './inbound/listener/types.js';
import type { Log } from './log.js';
import { openSpool } from './spool/index.js';
import { createSpoolAdmission, deadLetterCeiling, freeSpaceFloor } from './spool/admission.js';
import { domainsFile, readNodeState, spoolDir } from './state/index.js';
import { createListenerTls, type ListenerTls } from './tls/listener-tls.js';
import { startAcme, type AcmeOptions, type RunningAcme } from './tls/acme/index.js';
import { NODE_VERSION } from './version.js';
import { countOutbound, countSlotRefusals, createTelemetry, instrumentSmtpServer, spoolFigures, timeForwarding, type Telemetry } from './metrics/index.js';
import { createAuthFailures, createSubmissionServer, submissionOptionsFromConfig, type SubmissionSpoolMeta } from './submission/index.js';
import type { BackoffOptions } from './edge/backoff.js';
import { ComposedMessages, createOutboundWorker, describeOutbound, heloNameFromConfig, processJob, routeSettingsFromConfig, TransportPool, type DeliveryTimeouts, type OutboundWorker } from './outbound/index.js';

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
  const heloName = options.outbound === false ? '' : heloNameFromConfig(config);
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
  const outboundSettings = routeSettingsFromConfig(config);
  const outboundOptions = options.outbound === false ? null : options.outbound ?? {};
  // Sessions reused per destination (as an MTA's connection cache): one per message costs a handshake each.
  const transports = outboundOptions ? new TransportPool() : null;
  // The recipients of one message share its composition and signature.
  const composed = new ComposedMessages();
  const outboundCalls = outboundOptions && {
    claim: (max: number, signal: AbortSignal) => edge.claimOutbound(max, signal),
    report: (results: Parameters<typeof edge.reportOutbound>[0], signal: AbortSignal) => edge.reportOutbound(results, signal),
    deliver: (job: Parameters<typeof processJob>[0], signal: AbortSignal) => processJob(job, { settings: outboundSettings, resolve, hostName: heloName, log, timeouts: outboundOptions.timeouts, transports: transports ?? undefined, composed }, signal),
  };
  const outbound: OutboundWorker | null = outboundOptions && outboundCalls && createOutboundWorker({
    ...(metrics ? countOutbound(metrics, outboundCalls) : outboundCalls),
    log,
    onFatal,
    concurrency: outboundOptions.concurrency ?? config['outbound.concurrency'],
    idlePollMs: outboundOptions.idlePollMs,
    backoff: outboundOptions.backoff,
    stopTimeoutMs: outboundOptions.stopTimeoutMs,
  });

  const domains = createDomainCache({ fetchDomains: (signal) => edge.domains(signal), file: domainsFile(options.stateDir), log, refreshIntervalMs: options.domainRefreshMs });
  let tls: ListenerTls | null = null;
  const forwarder = createForwarder({
    spool,
    forward: metrics ? timeForwarding(metrics, (request, signal) => edge.forwardInbound(request, signal), () => 1) : (request, signal) => edge.forwardInbound(request, signal),
    forwardBatch: metrics
      ? timeForwarding(metrics, (requests, signal) => edge.forwardInboundBatch(requests, signal), (requests) => requests.length)
      : (requests, signal) => edge.forwardInboundBatch(requests, signal),
    maxMessageSize: config['relay_node.inbound.max_message_size'],
    deadLetters,
    log,
    onFatal,
    ...options.forwarder,
  });
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
  const servers: InboundSmtpServer[] = [];
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
  /** The submission listener (docs/submission.md): its own spool directory, the same PROXY front, TLS chain and drain. */
  async function openSubmission(): Promise<{ port: number; tlsPort: number | null }> {
    const submissionSpool = await openSpool<SubmissionSpoolMeta>(join(options.stateDir, 'submission-spool'));
    // A message left here by a crash was never answered 250 (that waits for the edge): its client sends it again.
    for (const id of await submissionSpool.list()) await submissionSpool.remove(id);
    closers.push(() => submissionSpool.close());
    const deps = {
      checkKey: edge.checkSubmissionKey.bind(edge), submit: edge.submitMessage.bind(edge), spool: submissionSpool,
      authFailures: createAuthFailures(config['submission.max_auth_failures'], config['submission.auth_failure_window']),
      log, admission: admission.refusal, stopping: submissionStopping.signal,
    };
    const settings = submissionOptionsFromConfig(config);
    const slots = createSessionSlots({ maxSessions: settings.maxSessions ?? 0, maxPerAddress: settings.maxSessionsPerIp ?? 0 });
    const sessionSlots = metrics ? countSlotRefusals(metrics, 'submission', slots) : slots;
    const proxy = submissionProxy ? { trusted: submissionTrusted } : undefined;
    const presented = submissionTlsEnabled ? tls : null;
    const openPort = async (port: number, secure: boolean) => {
      const server = createSubmissionServer(deps, { ...settings, sessionSlots, name: hostName, closeTimeoutMs: options.drainMs ?? 10_000, tls: presented?.forListener('submission'), secure });
      presented?.attach('submission', server);
      if (metrics) instrumentSmtpServer(metrics, 'submission', server, (sni) => certificateSource('submission', sni));
      servers.push(server);
      serverListeners.set(server, 'submission');
      const running = await listen(server, { port, host: options.host, proxy, log });
      listeners.push(running);
      reports.push({ name: 'submission', port: running.port, tls: secure ? 'implicit' : presented ? 'starttls' : 'off', proxy_protocol: submissionProxy });
      return running.port;
    };
    const port = await openPort(options.submissionPort!, false);
    const tlsPort = presented && options.submissionTlsPort !== undefined ? await openPort(options.submissionTlsPort, true) : null;
    return { port, tlsPort };
  }

  /** What a handshake on `listener` was answered with (docs/listeners.md), as a word: never the name asked for. */
  const certificateSource = (listener: string, servername: string | undefined): string => {
    const presented = tls?.presented(listener);
    if (!presented) return 'none';
    if (presented.source !== 'assigned' && servername && config['acme.enabled'] && config['acme.hosts'].includes(servername.toLowerCase())) return 'acme';
    return presented.source;
  };
  const serverListeners = new Map<InboundSmtpServer, string>();
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
    const deps: InboundDeps = {
      recipientDomainAccepted: (domain) => domains.accepts(domain),
      recipientDomainFull: (domain) => domains.isFull(domain),
      store: createSpoolStore({ spool, hostName, log, maxHeaderSize: config['relay_node.inbound.max_header_size'], onSpooled: () => forwarder.notify() }),
      authenticate: createAuthenticator({ resolver: resolve, mta: hostName, deadlineMs: config['relay_node.inbound.mail_auth_timeout'], log }),
      log,
      transforms: ingestTransforms(config['relay_node.inbound.bare_newlines'], config['relay_node.inbound.max_message_size']),
      admission: admission.refusal,
    };
    const settings = inboundOptionsFromConfig(config, 'relay_node.inbound');
    // One count of open sessions for both ports: they are one listener, with one set of caps.
    const slots = createSessionSlots({ maxSessions: settings.maxSessions ?? 0, maxPerAddress: settings.maxSessionsPerIp ?? 0 });
    const sessionSlots = metrics ? countSlotRefusals(metrics, 'inbound', slots) : slots;
    const base = { ...settings, sessionSlots, name: hostName, closeTimeoutMs: options.drainMs ?? 10_000 };
    const proxy = proxyEnabled ? { trusted } : undefined;
    const open = async (port: number, secure: boolean) => {
      const inboundTls = tlsEnabled ? tls : null;
      const server = createInboundServer(deps, { ...base, tls: inboundTls?.forListener('inbound'), secure });
      inboundTls?.attach('inbound', server);
      if (metrics) instrumentSmtpServer(metrics, 'inbound', server, (sni) => certificateSource('inbound', sni));
      servers.push(server);
      serverListeners.set(server, 'inbound');
      const running = await listen(server, { port, host: options.host, proxy, log });
      listeners.push(running);
      reports.push({ name: 'inbound', port: running.port, tls: secure ? 'implicit' : tlsEnabled ? 'starttls' : 'off', proxy_protocol: proxyEnabled });
      return running;
    };
    const inbound = await open(options.port, false);
    const implicit = tlsEnabled && tls && options.tlsPort !== undefined ? await open(options.tlsPort, true) : null;
    const submission = submissionOn ? await openSubmission() : null;
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
