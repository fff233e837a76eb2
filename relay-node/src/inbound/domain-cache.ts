// The registered domains, as last heard from the edge: RCPT is answered from
// this list, so mail keeps being accepted while the edge is unreachable.
import { readFile } from 'node:fs/promises';
import type { DomainsAnswer } from '@edgemail/shared';
import type { Log } from '../log.js';
import { writePrivateFile } from '../state/write-private-file.js';

export interface DomainCacheOptions {
  /** Asks the edge (`GET /relay/v1/domains`). */
  fetchDomains: (signal?: AbortSignal) => Promise<DomainsAnswer>;
  /** `<state>/domains.json`: read at start, rewritten when the list changes. */
  file: string;
  log: Log;
  /** Periodic refresh, ms. Default 30000. */
  refreshIntervalMs?: number;
  /**
   * A RCPT for an unknown domain refreshes the list when it is older than this, ms.
   * Default 1000: a domain registered a moment ago must not meet a permanent 550,
   * while a stream of RCPTs for junk domains costs the edge one list a second at most.
   */
  missMaxAgeMs?: number;
  now?: () => number;
}

export interface DomainCache {
  /**
   * Whether a project registered `domain` (lower case). Answered from the
   * list; an unknown domain refreshes it first when it is older than
   * `missMaxAgeMs`. Throws when the domain is unknown and the edge could not
   * be asked (the listener answers 451, so the sender retries).
   */
  accepts(domain: string): Promise<boolean>;
  /**
   * Whether the edge marked `domain` full (its project's inbound storage quota
   * is reached), as of the last list: RCPT is then `452 4.2.2`.
   */
  isFull(domain: string): boolean;
  /** The spam score at or above which the project of `domain` refuses mail at DATA, as of the last list; null: none set. */
  spamRejectScore(domain: string): number | null;
  /** Fetches the list now; concurrent callers share one request. */
  refresh(): Promise<void>;
  /** A heartbeat's `domains_version`: a change means a refresh now. */
  noteVersion(version: string): void;
  /** Reads domains.json, then refreshes every `refreshIntervalMs` (first one now, in the background). */
  start(): Promise<void>;
  stop(): void;
  readonly version: string | null;
  readonly size: number;
  /** The last list fetched from the edge (null until one is): its `inbound_rules` feed inbound/rules/node-rules.ts. */
  readonly answer: DomainsAnswer | null;
}

interface CacheFile {
  domains: string[];
  full?: string[];
  spam_reject?: Record<string, number>;
  version: string;
  fetched_at: string;
}

/**
 * @example
 * const domains = createDomainCache({ fetchDomains: (s) => edge.domains(s), file: domainsFile(stateDir), log });
 * await domains.start();
 * createInboundServer({ recipientDomainAccepted: (d) => domains.accepts(d), ... }, options);
 */
export function createDomainCache(options: DomainCacheOptions): DomainCache {
  const now = options.now ?? Date.now;
  const missMaxAgeMs = options.missMaxAgeMs ?? 1000;
  const refreshIntervalMs = options.refreshIntervalMs ?? 30_000;
  let names: ReadonlySet<string> | null = null;
  let full: ReadonlySet<string> = new Set();
  let spamReject: ReadonlyMap<string, number> = new Map();
  let version: string | null = null;
  let lastAnswer: DomainsAnswer | null = null;
  /** When the list in memory was fetched (0: never, or read from the file). */
  let fetchedAt = 0;
  /** When the last attempt failed: misses do not ask again within missMaxAgeMs. */
  let failedAt = 0;
  let inFlight: Promise<void> | null = null;
  let timer: NodeJS.Timeout | undefined;
  const stopping = new AbortController();

  const apply = async (answer: DomainsAnswer): Promise<void> => {
    const next = new Set(answer.domains.map((d) => d.toLowerCase()));
    const nextFull = new Set((answer.full ?? []).map((d) => d.toLowerCase()));
    const nextSpamReject = new Map(Object.entries(answer.spam_reject ?? {}).map(([d, score]) => [d.toLowerCase(), score]));
    const spamRejectChanged = nextSpamReject.size !== spamReject.size || [...nextSpamReject].some(([d, score]) => spamReject.get(d) !== score);
    const changed = answer.version !== version || !names || next.size !== names.size || [...next].some((d) => !names!.has(d))
      || nextFull.size !== full.size || [...nextFull].some((d) => !full.has(d)) || spamRejectChanged;
    names = next;
    full = nextFull;
    spamReject = nextSpamReject;
    version = answer.version;
    lastAnswer = answer;
    fetchedAt = now();
    failedAt = 0;
    if (!changed) return;
    const body: CacheFile = { domains: [...next].sort(), full: [...nextFull].sort(), spam_reject: Object.fromEntries([...nextSpamReject].sort()), version: answer.version, fetched_at: new Date(fetchedAt).toISOString() };
    await writePrivateFile(options.file, `${JSON.stringify(body)}\n`).catch((err: unknown) =>
      options.log.warn('domain list not saved to disk', { file: options.file, error: String(err) }));
  };

  const refresh = (): Promise<void> => {
    inFlight ??= options.fetchDomains(stopping.signal)
      .then(apply, (err: unknown) => {
        failedAt = now();
        throw err;
      })
      .finally(() => {
        inFlight = null;
      });
    return inFlight;
  };

  const background = (reason: string) => {
    refresh().catch((err: unknown) => {
      if (!stopping.signal.aborted) options.log.warn('domain list refresh failed; answering RCPT from the last list', { reason, error: String(err), domains: names?.size ?? 0 });
    });
  };

  return {
    async accepts(domain) {
      if (names?.has(domain)) return true;
      const t = now();
      const stale = t - fetchedAt > missMaxAgeMs;
      const recentlyFailed = failedAt > 0 && t - failedAt < missMaxAgeMs;
      if (inFlight) {
        await inFlight.catch(() => undefined);
      } else if (stale && !recentlyFailed) {
        await refresh().catch(() => undefined);
      }
      if (names?.has(domain)) return true;
      // Not in the list: a fresh list settles it; a stale one after a failed refresh cannot.
      if (now() - fetchedAt > missMaxAgeMs) throw new Error(`cannot refresh the domain list to check ${domain}`);
      return false;
    },
    isFull(domain) {
      return full.has(domain);
    },
    spamRejectScore(domain) {
      return spamReject.get(domain) ?? null;
    },
    refresh,
    noteVersion(v) {
      if (v !== version) background('heartbeat says the domain list changed');
    },
    async start() {
      try {
        const saved = JSON.parse(await readFile(options.file, 'utf8')) as CacheFile;
        if (Array.isArray(saved.domains)) {
          names = new Set(saved.domains);
          full = new Set(Array.isArray(saved.full) ? saved.full : []);
          spamReject = new Map(Object.entries(saved.spam_reject && typeof saved.spam_reject === 'object' ? saved.spam_reject : {}).filter(([, n]) => typeof n === 'number'));
          version = saved.version ?? null;
          // fetchedAt stays 0: a saved list answers known domains, but a miss asks the edge.
        }
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') options.log.warn('domains.json unreadable; starting without a list', { error: String(err) });
      }
      background('start-up');
      timer = setInterval(() => background('periodic'), refreshIntervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      stopping.abort();
    },
    get version() {
      return version;
    },
    get size() {
      return names?.size ?? 0;
    },
    get answer() {
      return lastAnswer;
    },
  };
}
