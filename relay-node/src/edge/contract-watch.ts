// The edge's word on this node's relay contract (docs/relay-protocol.md,
// "Versions"): a refusal (426) is said once at error level and shown in
// /readyz until an answer shows the contract served again. Every loop that
// calls the edge meets the same refusal on each try; their own lines about it
// go to debug, so the operator reads it once, not every retry.
import type { Log } from '../log.js';

/** The phrase of EdgeContractRefusedError's message, by which the loops' lines about it are known. */
const REFUSAL_MARK = "does not serve this node's relay contract";

export interface ContractWatch {
  /** The edge client's `onContract`. */
  onContract(refusal: string | null): void;
  /** The refusal standing now, null while the edge serves the contract. */
  refusal(): string | null;
  /** `log` with the loops' repeats of a standing refusal moved to debug. */
  readonly log: Log;
}

/** @example const watch = watchContract(log, (r) => telemetry?.setContractRefusal(r)); createEdgeClient({ …, onContract: watch.onContract }); */
export function watchContract(log: Log, onChange: (refusal: string | null) => void, describe: Record<string, unknown> = {}): ContractWatch {
  let standing: string | null = null;
  const repeat = (fields?: Record<string, unknown>) => standing !== null && typeof fields?.error === 'string' && fields.error.includes(REFUSAL_MARK);
  return {
    onContract(refusal) {
      if (refusal === standing) return;
      const was = standing;
      standing = refusal;
      if (refusal) {
        log.error('the edge does not serve this node\'s relay contract: nothing is forwarded, claimed or reported until one side is upgraded; mail stays spooled', { ...describe, refusal });
      } else if (was) {
        log.info('the edge serves this node\'s relay contract again', describe);
      }
      onChange(refusal);
    },
    refusal: () => standing,
    log: {
      debug: (message, fields) => log.debug?.(message, fields),
      info: (message, fields) => log.info(message, fields),
      warn: (message, fields) => (repeat(fields) ? log.debug?.(message, fields) : log.warn(message, fields)),
      error: (message, fields) => (repeat(fields) ? log.debug?.(message, fields) : log.error(message, fields)),
    },
  };
}
