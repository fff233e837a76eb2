// May the node take new mail now? One place answers, from a list of
// conditions on the spool (today: the free-space floor). The listener asks at
// MAIL FROM and when a message's data begins, and answers `452 4.3.1` with the
// reason while any condition holds: a 250 is a promise the spool can keep.
import { statfs } from 'node:fs/promises';
import type { Log } from '../log.js';

/**
 * One condition: resolves to why new mail must wait (a sentence the client
 * reads after `452 4.3.1`), or null when it does not stop mail. A condition
 * that throws stops mail too: a spool we cannot check is not one to promise on.
 */
export type AdmissionCondition = () => Promise<string | null>;

export interface SpoolAdmission {
  /** Why new mail must wait now, or null when it may be accepted. Cached for `cacheMs`; one check in flight. */
  refusal(): Promise<string | null>;
}

export interface SpoolAdmissionOptions {
  /** Checked in order; the first reason is the answer. */
  conditions: AdmissionCondition[];
  /** The answer is reused this long (ms), so a busy listener does not check per command. Default 1000. */
  cacheMs?: number;
  /** Told when mail stops being accepted and when it is accepted again. */
  log?: Log;
}

/**
 * @example
 * const admission = createSpoolAdmission({
 *   conditions: [freeSpaceFloor({ dir: spool.dir, minFreeBytes: config['relay_node.spool.min_free_bytes'] })],
 *   log,
 * });
 * const why = await admission.refusal(); // null: accept
 */
export function createSpoolAdmission(options: SpoolAdmissionOptions): SpoolAdmission {
  const cacheMs = options.cacheMs ?? 1000;
  let answer: { reason: string | null; at: number } | null = null;
  let checking: Promise<string | null> | null = null;

  const check = async (): Promise<string | null> => {
    for (const condition of options.conditions) {
      const reason = await condition().catch((err: unknown) => {
        options.log?.error('spool admission check failed; new mail waits', { error: String(err) });
        return 'Cannot check the spool right now, try again later';
      });
      if (reason) return reason;
    }
    return null;
  };

  return {
    refusal() {
      if (answer && Date.now() - answer.at < cacheMs) return Promise.resolve(answer.reason);
      checking ??= check().then((reason) => {
        if (reason !== (answer?.reason ?? null)) {
          if (reason) options.log?.warn('new mail refused (452 4.3.1) until the spool can take it', { reason });
          else if (answer) options.log?.info('new mail accepted again', {});
        }
        answer = { reason, at: Date.now() };
        checking = null;
        return reason;
      });
      return checking;
    },
  };
}

export interface FreeSpaceFloorOptions {
  /** A directory on the spool's file system. */
  dir: string;
  /** `relay_node.spool.min_free_bytes`; 0 disables the condition. */
  minFreeBytes: number;
}

/**
 * Stops mail while the file system holding `dir` has less than `minFreeBytes`
 * available to this (unprivileged) process: the floor keeps room for messages
 * already in flight, their fsyncs, and the node's other files.
 */
export function freeSpaceFloor(options: FreeSpaceFloorOptions): AdmissionCondition {
  return async () => {
    if (options.minFreeBytes <= 0) return null;
    const stats = await statfs(options.dir);
    const free = stats.bavail * stats.bsize;
    if (free >= options.minFreeBytes) return null;
    // How close to full the disk is stays in the operator's df, not in a reply to anyone who connects.
    return 'Insufficient system storage: the spool is below its free-space floor, try again later';
  };
}

export interface DeadLetterCeilingOptions {
  /** The count of `<spool>/dead/` (relay-node/src/inbound/forwarder/dead-letters.ts), kept current as messages are buried. */
  deadLetters: { tally(): { bytes: number } };
  /** `relay_node.spool.max_dead_letter_bytes`. */
  maxBytes: number;
}

/**
 * Stops mail while `dead/` (messages the edge refused for good) holds more
 * than `maxBytes`: new mail would be refused the same way, so it waits at the
 * sender until an operator has looked (`edgemail relay dead-letters`) and
 * cleared the folder, rather than piling up unseen.
 */
export function deadLetterCeiling(options: DeadLetterCeilingOptions): AdmissionCondition {
  return async () => {
    if (options.deadLetters.tally().bytes <= options.maxBytes) return null;
    return 'Insufficient system storage: messages refused by the platform await an operator, try again later';
  };
}
