// `edgemail-relay status`: what this machine's node is, what its spool holds,
// and (with the metrics listener on) whether it runs and is ready. Read from
// the state directory and the loopback listener: it works with the edge down.
import type { Config } from '@edgemail/shared';
import { countDeadLetters } from '../inbound/forwarder/dead-letters.js';
import { spoolFigures } from '../metrics/index.js';
import { readNodeState, spoolDir } from '../state/index.js';
import { NODE_VERSION } from '../version.js';

/** `/readyz` of the running node, or why it could not be asked. */
async function readiness(config: Config): Promise<string> {
  if (!config['relay_node.metrics.enabled']) return 'unknown (relay_node.metrics.enabled is off: no health listener to ask)';
  const host = config['relay_node.metrics.host'];
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${config['relay_node.metrics.port']}/readyz`;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3000) });
    const body = (await res.json().catch(() => ({}))) as { reason?: string };
    return res.status === 200 ? `running, ready (${url})` : `running, not ready: ${body.reason ?? res.status} (${url})`;
  } catch {
    return `not running (nothing answers ${url})`;
  }
}

/** Prints the status lines; the node's credential is never printed. */
export async function relayStatus(stateDir: string, config: Config): Promise<void> {
  const state = await readNodeState(stateDir);
  const spool = await spoolFigures(spoolDir(stateDir));
  const dead = await countDeadLetters(spoolDir(stateDir));
  const lines = [
    `node:         ${state.name} (${state.node_id})`,
    `edge:         ${state.edge_url}`,
    `enrolled at:  ${state.enrolled_at}`,
    `version:      ${NODE_VERSION}`,
    `state dir:    ${stateDir}`,
    `spool:        ${spool.depth} message${spool.depth === 1 ? '' : 's'} waiting for the edge (${spool.bytes} bytes)`,
    `dead letters: ${dead.count} (${dead.bytes} bytes; edgemail-relay dead-letters lists them)`,
    `process:      ${await readiness(config)}`,
  ];
  console.log(lines.join('\n'));
}
