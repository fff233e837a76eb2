// The DNS the ingest checks ask: the `dns.servers` setting, or the system's.
import { promises as dns } from 'node:dns';
import type { DNSResolver } from 'mailauth';
import { cachingResolver, type DnsCacheOptions } from './dns-cache.js';

export interface DnsResolverOptions {
  /** Per-query timeout in ms (c-ares default 5000 is long when SPF may chain ten lookups). */
  timeoutMs?: number;
  /** Attempts per server. */
  tries?: number;
  /**
   * Answers kept in process memory (see `cachingResolver`): on by default,
   * with its defaults (at most 60 s, negative answers 10 s); false asks the
   * servers every time.
   */
  cache?: DnsCacheOptions | false;
}

/**
 * A resolver for mailauth built on its own `dns.promises.Resolver`, so that
 * setting servers here never changes what the rest of the process resolves.
 * Empty `servers` keeps the system's (/etc/resolv.conf). Answers are cached
 * unless `cache: false`.
 *
 * @example createDnsResolver(['127.0.0.1:5353'])('example.test', 'TXT')
 */
export function createDnsResolver(servers: readonly string[], options: DnsResolverOptions = {}): DNSResolver {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 3000, tries: options.tries ?? 2 });
  if (servers.length) resolver.setServers([...servers]);
  // mailauth asks for TXT, A, AAAA, MX and PTR; its type names the answers as string lists.
  const resolve: DNSResolver = (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>;
  return options.cache === false ? resolve : cachingResolver(resolve, options.cache);
}
