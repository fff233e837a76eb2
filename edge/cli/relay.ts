// `edgemail relay enroll` and `edgemail relay start`: a relay node from the
// operator binary. The node itself lives in relay-node/; this is flags only.
import type { Config } from '@edgemail/shared';
import { defaultStateDir, enrollNode } from '../../relay-node/src/index.js';
import { runRelayStart, StartUsageError as RelayUsageError } from '../../relay-node/src/cli/start.js';

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

/** A flag or environment value that is not a port (the relay node's own). */
export { RelayUsageError };

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
 * until the edge revokes it (exit 3, naming the revocation). The checkout's
 * defaults: 2525 and 2587, no implicit-TLS port unless asked, text logs (the
 * packaged `edgemail-relay start` uses the production ones).
 */
export function relayStart(flags: RelayFlags, config: Config): Promise<number> {
  return runRelayStart(flags, config, { stateDir: defaultStateDir(), inboundPort: 2525, submissionPort: 2587, logFormat: 'text' });
}
