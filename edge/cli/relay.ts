// `edgemail relay enroll` and `edgemail relay start`: a relay node from the
// operator binary. The node itself lives in relay-node/; this is flags only.
import type { Config } from '@edgemail/shared';
import { defaultStateDir, enrollNode, isFatalEdgeError, startRelayNode } from '../../relay-node/src/index.js';

export interface RelayFlags {
  edge?: string;
  key?: string;
  name?: string;
  'state-dir'?: string;
  port?: string;
  host?: string;
  'tls-port'?: string;
  'submission-port'?: string;
  'submission-tls-port'?: string;
  force?: boolean;
  verbose?: boolean;
}

/** A flag or environment value that is not a port. */
export class RelayUsageError extends Error {}

function portOf(text: string | undefined, what: string): number | undefined {
  if (text === undefined || text === '') return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new RelayUsageError(`${what} must be a port number (0-65535), got ${text}`);
  return port;
}

/** `relay enroll --edge <url> --key <myk_…> [--name <n>] [--state-dir <dir>] [--force]`: prints the node id. */
export async function relayEnroll(flags: RelayFlags): Promise<void> {
  if (!flags.edge) throw new RelayUsageError('--edge <url> is required');
  const key = flags.key ?? process.env.EDGEMAIL_RELAY_KEY;
  if (!key) throw new RelayUsageError('--key <myk_ key holding relay:write> is required');
  const stateDir = flags['state-dir'] ?? defaultStateDir();
  const state = await enrollNode({ edgeUrl: flags.edge, key, name: flags.name, stateDir, force: flags.force });
  // The id alone on stdout, so it can be captured: NODE=$(pnpm -s edgemail relay enroll …)
  console.log(state.node_id);
  console.error(`relay node "${state.name}" enrolled at ${state.edge_url}; credential written to ${stateDir}/node.json (mode 0600)`);
}

/**
 * `relay start [--state-dir <dir>] [--port <n>] [--host <addr>] [--tls-port <n>] [--submission-port <n|off>]
 * [--submission-tls-port <n>] [--verbose]`:
 * runs the node in the foreground until SIGINT/SIGTERM (graceful: exit 0) or
 * until the edge revokes it (exit 3, naming the revocation).
 */
export async function relayStart(flags: RelayFlags, config: Config): Promise<number> {
  const port = portOf(flags.port, '--port') ?? portOf(process.env.EDGEMAIL_INBOUND_PORT, 'EDGEMAIL_INBOUND_PORT') ?? 2525;
  const tlsPort = portOf(flags['tls-port'], '--tls-port') ?? portOf(process.env.EDGEMAIL_INBOUND_TLS_PORT, 'EDGEMAIL_INBOUND_TLS_PORT');
  const host = flags.host ?? process.env.EDGEMAIL_INBOUND_HOST ?? '0.0.0.0';
  // Submission (docs/submission.md): on by default, `off` leaves it out.
  const submissionText = flags['submission-port'] ?? process.env.EDGEMAIL_SUBMISSION_PORT;
  const submissionPort = submissionText === 'off' ? undefined
    : portOf(flags['submission-port'], '--submission-port') ?? portOf(process.env.EDGEMAIL_SUBMISSION_PORT, 'EDGEMAIL_SUBMISSION_PORT') ?? 2587;
  const submissionTlsPort = submissionPort === undefined ? undefined
    : portOf(flags['submission-tls-port'], '--submission-tls-port') ?? portOf(process.env.EDGEMAIL_SUBMISSION_TLS_PORT, 'EDGEMAIL_SUBMISSION_TLS_PORT');
  let node;
  try {
    // --verbose: the debug lines too, as `relay_node.log_level = debug` asks.
    const settings: Config = flags.verbose ? { ...config, 'relay_node.log_level': 'debug' } : config;
    node = await startRelayNode({ stateDir: flags['state-dir'] ?? defaultStateDir(), config: settings, port, host, tlsPort, submissionPort, submissionTlsPort });
  } catch (err) {
    // Revoked before it could even start: the same exit as a revocation while running.
    if (!isFatalEdgeError(err)) throw err;
    console.error(`edgemail: relay node not started: ${err.message}`);
    return 3;
  }
  let signals = 0;
  const onSignal = (signal: string) => {
    if (++signals > 1) {
      console.error(`edgemail: ${signal} again, exiting without waiting (the spool is consistent; open sessions are cut)`);
      process.exit(130);
    }
    console.error(`edgemail: ${signal}: stopping the relay node (open sessions get up to 10 s)…`);
    void node.stop();
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  const reason = await node.closed;
  if (!reason) return 0;
  console.error(`edgemail: relay node ${node.nodeId} stopped: ${reason.message}`);
  return isFatalEdgeError(reason) ? 3 : 1;
}
