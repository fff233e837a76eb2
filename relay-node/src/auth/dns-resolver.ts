// The DNS the ingest checks ask: the `dns.servers` setting, or the system's.
import { promises as dns } from 'node:dns';
import type { DNSResolver } from 'mailauth';

export interface DnsResolverOptions {
  /** Per-query timeout in ms (c-ares default 5000 is long when SPF may chain ten lookups). */
  timeoutMs?: number;
  /** Attempts per server. */
  tries?: number;
}

/**
 * A resolver for mailauth built on its own `dns.promises.Resolver`, so that
 * setting servers here never changes what the rest of the process resolves.
 * Empty `servers` keeps the system's (/etc/resolv.conf).
 *
 * @example createDnsResolver(['127.0.0.1:5353'])('example.test', 'TXT')
 */
export function createDnsResolver(servers: readonly string[], options: DnsResolverOptions = {}): DNSResolver {
  const resolver = new dns.Resolver({ timeout: options.timeoutMs ?? 3000, tries: options.tries ?? 2 });
  if (servers.length) resolver.setServers([...servers]);
  // mailauth asks for TXT, A, AAAA, MX and PTR; its type names the answers as string lists.
  return (name, rrtype) => resolver.resolve(name, rrtype) as Promise<string[][] | string[]>;
}
