// When this node orders which host (docs/acme.md). At start and then every
// `intervalMs` (an hour, ±10% so nodes started together do not ask together),
// for each of `acme.hosts`: ask the edge for the host's lease; the edge grants
// it only when the stored certificate is missing or within 30 days of its end
// and no other node is ordering. Granted: order, store the result at the
// edge. A failed order is logged once with the CA's problem detail, reported
// to the edge (operators see it as the host's last error, and the edge holds
// the host back an hour for every node), and this node waits longer before
// its next try for that host (doubling from one interval, at most a day).
import { EdgeError, NodeCredentialError, NodeRevokedError } from '../../edge/errors.js';
import type { EdgeClient } from '../../edge/client.js';
import type { Log } from '../../log.js';
import type { OrderCertificate } from './order.js';

export type AcmeCheckOutcome = 'stored' | 'not_due' | 'held' | 'failed' | 'backing_off' | 'refused' | 'edge_unavailable';

export interface AcmeManagerOptions {
  hosts: readonly string[];
  edge: Pick<EdgeClient, 'acmeLease' | 'reportAcmeFailure' | 'storeAcmeCertificate'>;
  order: OrderCertificate;
  log: Log;
  /** A revoked credential: the node stops. */
  onFatal?: (err: Error) => void;
  /** Between checks, ms. Default an hour. */
  intervalMs?: number;
  /** Longest wait after failures, ms. Default a day. */
  maxBackoffMs?: number;
  now?: () => number;
}

export interface AcmeManager {
  /** Checks now, then every interval. */
  start(): void;
  /** One check of every host (waits for one in progress first); what happened to each. */
  checkNow(): Promise<Record<string, AcmeCheckOutcome>>;
  stop(): Promise<void>;
}

const HOUR = 3_600_000;

/** The CA's problem detail (acme-client puts it in the message), kept short enough for one log line and the edge. */
export function describeFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.replace(/\s+/g, ' ').trim().slice(0, 2000) || 'unknown error';
}

export function createAcmeManager(options: AcmeManagerOptions): AcmeManager {
  const intervalMs = options.intervalMs ?? HOUR;
  const maxBackoffMs = options.maxBackoffMs ?? 24 * HOUR;
  const now = options.now ?? Date.now;
  const failures = new Map<string, { count: number; until: number }>();
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<Record<string, AcmeCheckOutcome>> | null = null;
  let stopped = false;

  async function checkHost(host: string): Promise<AcmeCheckOutcome> {
    const failed = failures.get(host);
    if (failed && failed.until > now()) return 'backing_off';
    let lease;
    try {
      lease = await options.edge.acmeLease(host);
    } catch (err) {
      return edgeFailure(host, 'asking for the ACME lease', err);
    }
    if (!lease.granted) {
      options.log.debug?.('acme: not ordering', { host, reason: lease.reason, until: lease.expires_at, not_after: lease.not_after });
      return lease.reason === 'not_due' ? 'not_due' : 'held';
    }
    options.log.info('acme: ordering a certificate', { host, lease_until: lease.expires_at, previous_not_after: lease.not_after });
    let issued;
    try {
      issued = await options.order(host);
    } catch (err) {
      return orderFailed(host, describeFailure(err));
    }
    try {
      const stored = await options.edge.storeAcmeCertificate({ host, certificate: issued.certificate, chain: issued.chain, private_key: issued.privateKey });
      failures.delete(host);
      options.log.info('acme: certificate stored', { host, name: stored.name, not_after: stored.not_after, fingerprint_sha256: stored.fingerprint_sha256 });
      return 'stored';
    } catch (err) {
      if (isFatal(err)) return edgeFailure(host, 'storing the certificate', err);
      return orderFailed(host, `the edge refused the issued certificate: ${describeFailure(err)}`);
    }
  }

  async function orderFailed(host: string, detail: string): Promise<AcmeCheckOutcome> {
    const count = (failures.get(host)?.count ?? 0) + 1;
    const waitMs = Math.min(intervalMs * 2 ** (count - 1), maxBackoffMs);
    failures.set(host, { count, until: now() + waitMs });
    options.log.warn('acme: order failed', { host, error: detail, failures: count, next_try_in_s: Math.round(waitMs / 1000) });
    try {
      await options.edge.reportAcmeFailure(host, detail);
    } catch (err) {
      if (isFatal(err)) options.onFatal?.(err as Error);
      // The lease expires on its own; the failure is in this node's log.
    }
    return 'failed';
  }

  function edgeFailure(host: string, doing: string, err: unknown): AcmeCheckOutcome {
    if (isFatal(err)) {
      options.onFatal?.(err as Error);
      return 'refused';
    }
    const refused = err instanceof EdgeError && err.status !== null && err.status >= 400 && err.status < 500 && err.status !== 429;
    // A refusal (acme off at the edge, a host it does not list) repeats at every check until the settings agree: say so each time.
    options.log.warn(`acme: the edge failed ${doing}`, { host, error: describeFailure(err) });
    return refused ? 'refused' : 'edge_unavailable';
  }

  async function checkAll(): Promise<Record<string, AcmeCheckOutcome>> {
    const outcomes: Record<string, AcmeCheckOutcome> = {};
    // One host at a time: orders are rare and a node need not load the CA with several at once.
    for (const host of options.hosts) {
      if (stopped) break;
      outcomes[host] = await checkHost(host);
    }
    return outcomes;
  }

  async function checkNow(): Promise<Record<string, AcmeCheckOutcome>> {
    while (running) await running.catch(() => undefined);
    running = checkAll();
    try {
      return await running;
    } finally {
      running = null;
    }
  }

  function schedule(): void {
    if (stopped) return;
    const delay = intervalMs * (0.9 + Math.random() * 0.2);
    timer = setTimeout(() => {
      void checkNow().finally(schedule);
    }, delay);
    timer.unref();
  }

  return {
    start() {
      void checkNow().finally(schedule);
    },
    checkNow,
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      // An order in progress is abandoned after a moment: its lease expires at the edge on its own.
      if (running) await Promise.race([running.catch(() => undefined), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
    },
  };
}

function isFatal(err: unknown): boolean {
  return err instanceof NodeRevokedError || err instanceof NodeCredentialError;
}
