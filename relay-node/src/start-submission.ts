// The submission direction's start-up (docs/submission.md): its own spool
// directory, the same PROXY front, TLS chain and drain as the inbound
// listener, its own session caps. node.ts composes it with the other directions.
import { join } from 'node:path';
import type { Config } from '@edgemail/shared';
import type { EdgeClient } from './edge/client.js';
import type { Log } from './log.js';
import { countSlotRefusals, type NodeMetrics } from './metrics/index.js';
import type { ServeListener } from './server.js';
import { createSessionSlots } from './smtp/index.js';
import { openSpool } from './spool/index.js';
import {
  createAuthFailures, createHandover, createLeaseBook, createRecentSubmissions, createSubmissionServer, restoreAccepted, submissionMaxMessageSize,
  submissionOptionsFromConfig, type SubmissionSpoolMeta,
} from './submission/index.js';
import type { ListenerTls } from './tls/listener-tls.js';

export interface SubmissionListenerDeps {
  config: Config;
  /** Holds `submission-spool/`. */
  stateDir: string;
  /** The submission port, and the implicit-TLS one when given (and `submission.tls.enabled`). */
  port: number;
  tlsPort?: number;
  hostName: string;
  drainMs?: number;
  edge: EdgeClient;
  /** The node's certificates, when any listener presents one. */
  tls: ListenerTls | null;
  admission: () => Promise<string | null>;
  /** Aborted when the node stops: submissions waiting on the edge are answered 451. */
  stopping: AbortSignal;
  log: Log;
  metrics?: NodeMetrics;
  serve: ServeListener;
  /** Called with what the node's stop() closes last (the submission spool). */
  onClose: (close: () => Promise<void>) => void;
}

/**
 * Opens the submission listener's ports; a message a crash left in its spool
 * is removed (it was never answered 250).
 */
export async function openSubmission(deps: SubmissionListenerDeps): Promise<{ port: number; tlsPort: number | null }> {
  const { config, edge, log, metrics } = deps;
  const submissionProxy = config['submission.proxy_protocol.enabled'];
  const submissionTrusted = config['submission.proxy_protocol.trusted'];
  // One file per message (spool/one-file.ts): only this module reads the submission spool.
  const submissionSpool = await openSpool<SubmissionSpoolMeta>(join(deps.stateDir, 'submission-spool'), { layout: 'single' });
  const leases = createLeaseBook((body, signal) => edge.leaseSubmission(body, signal));
  const handover = createHandover({
    spool: submissionSpool, submitBatch: edge.submitBatch.bind(edge), settle: leases.settle, log, stopping: deps.stopping,
    maxBatchBytes: submissionMaxMessageSize(config),
  });
  // A message answered 250 from a lease is handed over now; one that waited for the edge's verdict
  // was never answered 250: its client sends it again.
  await restoreAccepted(submissionSpool, handover, log);
  // What the edge has not answered for by then stays spooled and is handed over after the restart.
  deps.onClose(() => submissionSpool.close());
  const submissionDeps = {
    checkKey: edge.checkSubmissionKey.bind(edge), submit: edge.submitMessage.bind(edge), spool: submissionSpool,
    authFailures: createAuthFailures(config['submission.max_auth_failures'], config['submission.auth_failure_window']),
    log, admission: deps.admission, stopping: deps.stopping,
    fast: { leases, handover, recent: createRecentSubmissions() },
  };
  const settings = submissionOptionsFromConfig(config);
  const slots = createSessionSlots({ maxSessions: settings.maxSessions ?? 0, maxPerAddress: settings.maxSessionsPerIp ?? 0 });
  const sessionSlots = metrics ? countSlotRefusals(metrics, 'submission', slots) : slots;
  const proxy = submissionProxy ? { trusted: submissionTrusted } : undefined;
  const presented = config['submission.tls.enabled'] ? deps.tls : null;
  const openPort = async (port: number, secure: boolean) => {
    const server = createSubmissionServer(submissionDeps, { ...settings, sessionSlots, name: deps.hostName, closeTimeoutMs: deps.drainMs ?? 10_000, tls: presented?.forListener('submission'), secure });
    presented?.attach('submission', server);
    const running = await deps.serve(server, 'submission', port, proxy, (bound) => ({ name: 'submission', port: bound, tls: secure ? 'implicit' : presented ? 'starttls' : 'off', proxy_protocol: submissionProxy }));
    return running.port;
  };
  const port = await openPort(deps.port, false);
  const tlsPort = presented && deps.tlsPort !== undefined ? await openPort(deps.tlsPort, true) : null;
  return { port, tlsPort };
}
