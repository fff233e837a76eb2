// `start`: the relay node in the foreground until SIGTERM or SIGINT (drained:
// exit 0) or until the edge revokes it (exit 3). Shared by the packaged
// `edgemail-relay start` (production ports, JSON logs) and the checkout's
// `pnpm edgemail relay start` (2525/2587, text logs): only the defaults differ.
import type { Config } from '@edgemail/shared';
import { isFatalEdgeError } from '../edge/errors.js';
import { createConsoleLog, type Log } from '../log.js';
import { startRelayNode } from '../node.js';
import { lockStateDir } from './pid-lock.js';

export interface StartFlags {
  'state-dir'?: string;
  port?: string;
  host?: string;
  'tls-port'?: string;
  'submission-port'?: string;
  'submission-tls-port'?: string;
  verbose?: boolean;
}

/** What a flag or variable left unset means: the two binaries differ here only. */
export interface StartDefaults {
  stateDir: string;
  inboundPort: number;
  submissionPort: number;
  /** The implicit-TLS submission port when submission TLS is on (465 in production); none: only when asked for. */
  submissionTlsPort?: number;
  /** What `relay_node.log_format = auto` means. */
  logFormat: 'text' | 'json';
  /** The prefix of text log lines. */
  logPrefix?: string;
}

/** A flag or environment value that is not a port. */
export class StartUsageError extends Error {}

function portOf(text: string | undefined, what: string): number | undefined {
  if (text === undefined || text === '') return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new StartUsageError(`${what} must be a port number (0-65535), got ${text}`);
  return port;
}

/** `off` leaves a listener out; a port; else the variable; else the default. */
function choosePort(flag: string | undefined, flagName: string, envName: string, fallback: number | undefined): number | undefined {
  const text = flag ?? process.env[envName];
  if (text === 'off') return undefined;
  return portOf(flag, flagName) ?? portOf(process.env[envName], envName) ?? fallback;
}

/** The node's log as the settings and the binary ask: `relay_node.log_format`, `relay_node.log_level` (or --verbose). */
export function nodeLog(config: Config, defaults: Pick<StartDefaults, 'logFormat' | 'logPrefix'>, verbose = false): Log {
  const format = config['relay_node.log_format'] === 'auto' ? defaults.logFormat : config['relay_node.log_format'];
  return createConsoleLog(defaults.logPrefix ?? 'relay', { format, level: verbose ? 'debug' : config['relay_node.log_level'] });
}

/** Runs the node; resolves to the process's exit code. */
export async function runRelayStart(flags: StartFlags, config: Config, defaults: StartDefaults): Promise<number> {
  const port = choosePort(flags.port, '--port', 'EDGEMAIL_INBOUND_PORT', defaults.inboundPort)!;
  const tlsPort = portOf(flags['tls-port'], '--tls-port') ?? portOf(process.env.EDGEMAIL_INBOUND_TLS_PORT, 'EDGEMAIL_INBOUND_TLS_PORT');
  const host = flags.host ?? process.env.EDGEMAIL_INBOUND_HOST ?? '0.0.0.0';
  // Submission (docs/submission.md): on by default, `off` leaves it out.
  const submissionPort = choosePort(flags['submission-port'], '--submission-port', 'EDGEMAIL_SUBMISSION_PORT', defaults.submissionPort);
  const submissionTlsPort = submissionPort === undefined ? undefined
    : choosePort(flags['submission-tls-port'], '--submission-tls-port', 'EDGEMAIL_SUBMISSION_TLS_PORT', config['submission.tls.enabled'] ? defaults.submissionTlsPort : undefined);
  const settings: Config = flags.verbose ? { ...config, 'relay_node.log_level': 'debug' } : config;
  const log = nodeLog(settings, defaults, flags.verbose);
  // docs/operations.md: the unit's TimeoutStopSec is above it and the outbound stop together.
  const drainMs = config['relay_node.drain_timeout'];
  const stateDir = flags['state-dir'] ?? defaults.stateDir;
  const release = lockStateDir(stateDir, 'start');
  process.once('exit', release);
  let node;
  try {
    node = await startRelayNode({ stateDir, config: settings, port, host, tlsPort, submissionPort, submissionTlsPort, log, drainMs });
  } catch (err) {
    // Revoked before it could even start: the same exit as a revocation while running.
    if (!isFatalEdgeError(err)) throw err;
    log.error(`relay node not started: ${err.message}`);
    return 3;
  }
  let signals = 0;
  const onSignal = (signal: string) => {
    if (++signals > 1) {
      log.error(`${signal} again, exiting without waiting (the spool is consistent; open sessions are cut)`);
      process.exit(130);
    }
    log.info(`${signal}: stopping the relay node: no new sessions; open ones get up to ${drainMs / 1000} s, deliveries in flight up to 30 s; the spool is kept`, { signal });
    void node.stop();
  };
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  const reason = await node.closed;
  if (!reason) return 0;
  log.error(`relay node ${node.nodeId} stopped: ${reason.message}`);
  return isFatalEdgeError(reason) ? 3 : 1;
}
