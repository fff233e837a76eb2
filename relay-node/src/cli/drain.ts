// `edgemail-relay drain`: forward what the spool holds to the edge with no
// listener open, and exit once it is empty. For taking a machine out of
// service (or moving it): stop the unit (its SIGTERM keeps the spool), drain,
// then the state directory holds no mail. Dead letters stay where they are.
import type { Config } from '@edgemail/shared';
import { createEdgeClient } from '../edge/client.js';
import { openDeadLetters } from '../inbound/forwarder/dead-letters.js';
import { createForwarder } from '../inbound/forwarder/forwarder.js';
import type { SpooledMeta } from '../inbound/spool-store/spooled-message.js';
import type { Log } from '../log.js';
import { openSpool } from '../spool/index.js';
import { readNodeState, spoolDir } from '../state/index.js';
import { NODE_VERSION } from '../version.js';
import { lockStateDir } from './pid-lock.js';

/**
 * Resolves to the exit code: 0 when the spool is empty, 1 when `timeoutMs`
 * passed first (what is left stays spooled), 3 when the edge refuses the node.
 */
export async function relayDrain(stateDir: string, config: Config, log: Log, timeoutMs: number): Promise<number> {
  const state = await readNodeState(stateDir);
  const release = lockStateDir(stateDir, 'drain');
  try {
    const edge = createEdgeClient({ url: state.edge_url, token: state.token, version: NODE_VERSION });
    const spool = await openSpool<SpooledMeta>(spoolDir(stateDir));
    const deadLetters = await openDeadLetters(spool);
    let fatal: Error | null = null;
    const forwarder = createForwarder({
      spool, deadLetters, log, maxMessageSize: config['relay_node.inbound.max_message_size'],
      forward: (request, signal) => edge.forwardInbound(request, signal),
      forwardBatch: (requests, signal) => edge.forwardInboundBatch(requests, signal),
      onFatal: (err) => { fatal = err; },
      backoff: { initialMs: 500, maxMs: 10_000 },
      idlePollMs: 1000,
    });
    const start = await spool.depth();
    log.info('draining the spool to the edge', { spool_depth: start, edge: state.edge_url });
    forwarder.start();
    const deadline = Date.now() + timeoutMs;
    let depth = start;
    while (depth > 0 && !fatal && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      depth = await spool.depth();
    }
    await forwarder.stop();
    await spool.close();
    if (fatal) {
      log.error(`the edge refuses this node: ${(fatal as Error).message}; ${depth} message(s) stay spooled`);
      return 3;
    }
    if (depth > 0) {
      log.error(`${depth} message(s) still spooled after ${timeoutMs / 1000} s (is the edge reachable?); run drain again, or start the node`, { spool_depth: depth });
      return 1;
    }
    const dead = deadLetters.tally();
    log.info('spool drained: every message was acknowledged by the edge', { forwarded: start, dead_letters: dead.count });
    return 0;
  } finally {
    release();
  }
}
