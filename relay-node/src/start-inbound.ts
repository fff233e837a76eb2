// The inbound (MX) direction's start-up: the forwarder that hands spooled mail
// to the edge, and the inbound listener's ports (port 25's, the implicit-TLS
// one) with what they check and where they spool. node.ts composes it with the
// other directions and owns the shared parts (spool, domains, TLS, admission).
import type { Config } from '@edgemail/shared';
import type { EdgeClient } from './edge/client.js';
import type { DomainCache } from './inbound/domain-cache.js';
import { createNodeRules } from './inbound/rules/node-rules.js';
import type { DeadLetters } from './inbound/forwarder/dead-letters.js';
import { createForwarder, type Forwarder, type ForwarderOptions } from './inbound/forwarder/forwarder.js';
import { createInboundServer, inboundOptionsFromConfig, type InboundDeps } from './inbound/listener/index.js';
import { createAuthenticator, type createDnsResolver } from './inbound/mail-auth/index.js';
import { createSpoolStore, ingestTransforms } from './inbound/spool-store/spool-store.js';
import type { SpooledMeta } from './inbound/spool-store/spooled-message.js';
import { createRspamdClient, withSpamCheck } from './inbound/spam/index.js';
import type { AuthenticateMessage } from './inbound/mail-auth/verdicts.js';
import type { Log } from './log.js';
import { countSlotRefusals, timeForwarding, type NodeMetrics } from './metrics/index.js';
import type { RunningListener, ServeListener } from './server.js';
import { createSessionSlots } from './smtp/index.js';
import type { Spool } from './spool/index.js';
import type { ListenerTls } from './tls/listener-tls.js';

/** Test overrides of the forwarder's pace (RelayNodeOptions.forwarder). */
export type ForwarderOverrides = Pick<ForwarderOptions, 'concurrency' | 'idlePollMs' | 'backoff'>;

export interface InboundForwarderDeps {
  config: Config;
  spool: Spool<SpooledMeta>;
  deadLetters: DeadLetters;
  edge: EdgeClient;
  log: Log;
  onFatal: (err: Error) => void;
  metrics?: NodeMetrics;
  overrides?: ForwarderOverrides;
}

/** The forwarder (not started): spooled inbound mail to the edge, one by one or in batches, timed when metrics are on. */
export function createInboundForwarder(deps: InboundForwarderDeps): Forwarder {
  const { config, spool, deadLetters, edge, log, onFatal, metrics } = deps;
  return createForwarder({
    spool,
    forward: metrics ? timeForwarding(metrics, (request, signal) => edge.forwardInbound(request, signal), () => 1) : (request, signal) => edge.forwardInbound(request, signal),
    forwardBatch: metrics
      ? timeForwarding(metrics, (requests, signal) => edge.forwardInboundBatch(requests, signal), (requests) => requests.length)
      : (requests, signal) => edge.forwardInboundBatch(requests, signal),
    maxMessageSize: config['relay_node.inbound.max_message_size'],
    deadLetters,
    log,
    onFatal,
    ...deps.overrides,
  });
}

export interface InboundListenerDeps {
  config: Config;
  /** The name in the greeting, EHLO reply, Received and Authentication-Results. */
  hostName: string;
  /** The inbound port, and the implicit-TLS one when given (and `relay_node.inbound.tls.enabled`). */
  port: number;
  tlsPort?: number;
  drainMs?: number;
  /** The node's certificates, when any listener presents one. */
  tls: ListenerTls | null;
  domains: DomainCache;
  spool: Spool<SpooledMeta>;
  forwarder: Forwarder;
  resolve: ReturnType<typeof createDnsResolver>;
  admission: () => Promise<string | null>;
  log: Log;
  metrics?: NodeMetrics;
  serve: ServeListener;
}

/**
 * Opens the inbound listener's ports: one count of open sessions for both,
 * the PROXY front when `relay_node.inbound.proxy_protocol.enabled`, STARTTLS
 * (and the implicit-TLS port) when `relay_node.inbound.tls.enabled`.
 */
export async function openInbound(deps: InboundListenerDeps): Promise<{ inbound: RunningListener; implicit: RunningListener | null }> {
  const { config, hostName, spool, forwarder, domains, log, metrics, tls } = deps;
  const tlsEnabled = config['relay_node.inbound.tls.enabled'];
  const proxyEnabled = config['relay_node.inbound.proxy_protocol.enabled'];
  const trusted = config['relay_node.inbound.proxy_protocol.trusted'];
  const inboundDeps: InboundDeps = {
    recipientDomainAccepted: (domain) => domains.accepts(domain),
    recipientDomainFull: (domain) => domains.isFull(domain),
    store: createSpoolStore({ spool, hostName, log, maxHeaderSize: config['relay_node.inbound.max_header_size'], onSpooled: () => forwarder.notify() }),
    authenticate: withSpamScoring(deps, createAuthenticator({ resolver: deps.resolve, mta: hostName, deadlineMs: config['relay_node.inbound.mail_auth_timeout'], log })),
    log,
    transforms: ingestTransforms(config['relay_node.inbound.bare_newlines'], config['relay_node.inbound.max_message_size']),
    admission: deps.admission,
    rules: createNodeRules(() => domains.answer),
  };
  const settings = inboundOptionsFromConfig(config, 'relay_node.inbound');
  // One count of open sessions for both ports: they are one listener, with one set of caps.
  const slots = createSessionSlots({ maxSessions: settings.maxSessions ?? 0, maxPerAddress: settings.maxSessionsPerIp ?? 0 });
  const sessionSlots = metrics ? countSlotRefusals(metrics, 'inbound', slots) : slots;
  const base = { ...settings, sessionSlots, name: hostName, closeTimeoutMs: deps.drainMs ?? 10_000 };
  const proxy = proxyEnabled ? { trusted } : undefined;
  const open = async (port: number, secure: boolean) => {
    const inboundTls = tlsEnabled ? tls : null;
    const server = createInboundServer(inboundDeps, { ...base, tls: inboundTls?.forListener('inbound'), secure });
    inboundTls?.attach('inbound', server);
    return deps.serve(server, 'inbound', port, proxy, (bound) => ({ name: 'inbound', port: bound, tls: secure ? 'implicit' : tlsEnabled ? 'starttls' : 'off', proxy_protocol: proxyEnabled }));
  };
  const inbound = await open(deps.port, false);
  const implicit = tlsEnabled && tls && deps.tlsPort !== undefined ? await open(deps.tlsPort, true) : null;
  return { inbound, implicit };
}

/**
 * The verdict function with rspamd's score added when
 * `relay_node.inbound.spam.rspamd_url` is set (docs/inbound.md, Spam scoring):
 * the projects' reject thresholds come with the domain list.
 */
function withSpamScoring(deps: InboundListenerDeps, authenticate: AuthenticateMessage): AuthenticateMessage {
  const url = deps.config['relay_node.inbound.spam.rspamd_url'];
  if (!url) return authenticate;
  const { metrics } = deps;
  return withSpamCheck(authenticate, {
    check: createRspamdClient({ url, timeoutMs: deps.config['relay_node.inbound.spam.timeout'] }),
    rejectScore: (domain) => deps.domains.spamRejectScore(domain),
    onFailure: metrics ? (reason) => metrics.spamCheckFailures.inc({ reason }) : undefined,
    onScored: metrics ? () => metrics.spamChecks.inc() : undefined,
    log: deps.log,
    url,
  });
}
