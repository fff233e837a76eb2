// The node's heartbeat: every 30 s it tells the edge its version, listeners,
// TLS state and spool depth, and learns whether the domain list changed.
import type { EdgeClient } from './edge/client.js';
import { isFatalEdgeError } from './edge/errors.js';
import type { HeartbeatBody } from '@edgemail/shared';
import type { Log } from './log.js';

export interface HeartbeatOptions {
  edge: Pick<EdgeClient, 'heartbeat'>;
  /** The body of the next beat. */
  report: () => Promise<HeartbeatBody>;
  /** The answer's `domains_version`. */
  onDomainsVersion: (version: string) => void;
  /** Revoked or unknown credential. */
  onFatal: (err: Error) => void;
  /** A beat got through after failed ones: the edge is back. */
  onRecovered?: () => void;
  log: Log;
  /** Default 30000 ms. */
  intervalMs?: number;
}

export interface Heartbeat {
  /** Beats now, then every `intervalMs`. */
  start(): void;
  stop(): void;
  /** One beat now (also what the timer runs); never throws. */
  beat(): Promise<void>;
}

/**
 * A missed beat is only logged (the next one comes soon); the first failure
 * after a success is a warning, repeats are quiet until the edge answers again.
 */
export function createHeartbeat(options: HeartbeatOptions): Heartbeat {
  const stopping = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  let failing = false;
  let running: Promise<void> | null = null;

  const once = async () => {
    try {
      const answer = await options.edge.heartbeat(await options.report(), stopping.signal);
      if (failing) {
        options.log.info('heartbeat: the edge answers again');
        options.onRecovered?.();
      }
      failing = false;
      options.onDomainsVersion(answer.domains_version);
    } catch (err) {
      if (stopping.signal.aborted) return;
      if (isFatalEdgeError(err)) return options.onFatal(err);
      if (!failing) options.log.warn('heartbeat failed; the node keeps accepting mail into its spool', { error: String(err) });
      failing = true;
    }
  };

  const beat = () => {
    // One beat at a time: a slow edge must not pile requests up.
    running ??= once().finally(() => {
      running = null;
    });
    return running;
  };

  return {
    start() {
      void beat();
      timer = setInterval(() => void beat(), options.intervalMs ?? 30_000);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      stopping.abort();
    },
    beat,
  };
}
