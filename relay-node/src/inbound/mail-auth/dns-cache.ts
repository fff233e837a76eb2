// A small in-process cache of DNS answers for the ingest checks. mailauth asks
// for the same few records again and again (the sender's SPF record, its
// DMARC record, the signer's DKIM key): every message from one domain costs
// the same lookups, one after the other, before the reply to DATA. Real MTAs
// answer these from a cache (a local resolver's, or their own); this is ours.
import type { DNSResolver } from 'mailauth';

export interface DnsCacheOptions {
  /**
   * Longest an answer is kept, in ms. Node's resolver does not report the
   * TTL of TXT, MX or PTR answers, so this bounds every answer instead: a
   * record changed at its source is seen at most this much later. Default
   * 60000 (most SPF, DMARC and DKIM records publish 300 s or more).
   */
  maxAgeMs?: number;
  /** How long an authoritative "no such name" or "no such record" (ENOTFOUND, ENODATA) is kept, in ms. Default 10000. */
  negativeMaxAgeMs?: number;
  /** Most answers kept; the oldest are dropped first. Default 10000. */
  maxEntries?: number;
  /** The clock, for tests. */
  now?: () => number;
}

type Answer = Awaited<ReturnType<DNSResolver>>;

interface Entry {
  /** When the entry stops counting; Infinity while its lookup is in flight. */
  expires: number;
  lookup: Promise<Answer>;
}

/** Answers that say the record does not exist (RFC 2308 negative caching); timeouts and server failures are asked again. */
const NEGATIVE = new Set(['ENOTFOUND', 'ENODATA']);

/**
 * Wraps `resolve` with a cache keyed by name (case-insensitive) and type.
 * Concurrent questions for the same record share one lookup. Errors other
 * than an authoritative negative answer are never kept, so a timeout is
 * retried by the next message. Each caller gets its own copy of the answer.
 *
 * @example const resolver = cachingResolver(createDnsResolver(servers, { cache: false }), { maxAgeMs: 30_000 });
 */
export function cachingResolver(resolve: DNSResolver, options: DnsCacheOptions = {}): DNSResolver {
  const maxAgeMs = options.maxAgeMs ?? 60_000;
  const negativeMaxAgeMs = options.negativeMaxAgeMs ?? 10_000;
  const maxEntries = Math.max(1, options.maxEntries ?? 10_000);
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();

  const keep = (key: string, entry: Entry) => {
    entries.delete(key);
    entries.set(key, entry);
    // Map order is insertion order: the first keys are the oldest.
    for (const oldest of entries.keys()) {
      if (entries.size <= maxEntries) break;
      entries.delete(oldest);
    }
  };

  return async (name, rrtype) => {
    const key = `${rrtype.toUpperCase()} ${name.toLowerCase().replace(/\.$/, '')}`;
    let entry = entries.get(key);
    if (!entry || entry.expires <= now()) {
      const lookup = resolve(name, rrtype);
      const fresh: Entry = { expires: Infinity, lookup };
      entry = fresh;
      keep(key, fresh);
      lookup.then(
        () => { fresh.expires = now() + maxAgeMs; },
        (err: NodeJS.ErrnoException) => {
          if (NEGATIVE.has(err?.code ?? '')) fresh.expires = now() + negativeMaxAgeMs;
          else if (entries.get(key) === fresh) entries.delete(key);
        },
      );
    }
    try {
      return structuredClone(await entry.lookup);
    } catch (err) {
      throw copyError(err);
    }
  };
}

/** A new error like `err` (message, code, hostname, syscall), so no caller can change what the next one is told. */
function copyError(err: unknown): unknown {
  if (!(err instanceof Error)) return err;
  const copy = new Error(err.message);
  for (const field of ['code', 'errno', 'hostname', 'syscall'] as const) {
    const value = (err as unknown as Record<string, unknown>)[field];
    if (value !== undefined) Object.assign(copy, { [field]: value });
  }
  return copy;
}
