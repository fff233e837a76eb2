// Starts a real inbound listener on a free loopback port with an in-memory
// store, a log collector and (by default) the real verifier.
import type { AddressInfo } from 'node:net';
import { createAuthenticator } from '../src/inbound/mail-auth/authenticate.js';
import { createDnsResolver } from '../src/inbound/mail-auth/dns-resolver.js';
import { createInboundServer, type InboundServerOptions } from '../src/inbound/listener/inbound-server.js';
import type { BoundedSmtpServer } from '../src/smtp/index.js';
import type { InboundDeps } from '../src/inbound/listener/types.js';
import type { Log } from '../src/log.js';
import { memoryStore, type MemoryStore } from './memory-store.js';

export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields?: Record<string, unknown>;
}

export interface RunningInbound {
  port: number;
  server: BoundedSmtpServer;
  store: MemoryStore;
  logs: LogLine[];
  close(): Promise<void>;
}

export interface HarnessOptions {
  /** Domains the "edge" serves. Default `inbox.test`. */
  domains?: string[];
  /** The DNS the verifier asks; without it every check sees a dead server quickly (temperror). */
  dnsServer?: string;
  deps?: Partial<InboundDeps>;
  options?: Partial<InboundServerOptions>;
}

export function collectingLog(lines: LogLine[]): Log {
  return {
    debug: (message, fields) => lines.push({ level: 'debug', message, fields }),
    info: (message, fields) => lines.push({ level: 'info', message, fields }),
    warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
    error: (message, fields) => lines.push({ level: 'error', message, fields }),
  };
}

/** The listener `startInbound` runs, with its store and log, not yet listening (for tests that bind it themselves). */
export function createTestInbound(harness: HarnessOptions = {}): Omit<RunningInbound, 'port' | 'close'> {
  const domains = new Set(harness.domains ?? ['inbox.test']);
  const store = memoryStore();
  const logs: LogLine[] = [];
  const resolver = createDnsResolver(harness.dnsServer ? [harness.dnsServer] : ['127.0.0.1:9'], { timeoutMs: 200, tries: 1 });
  const server = createInboundServer(
    {
      recipientDomainAccepted: async (domain) => domains.has(domain),
      store: store.store,
      authenticate: createAuthenticator({ resolver, mta: 'mx.edgemail.test' }),
      log: collectingLog(logs),
      ...harness.deps,
    },
    {
      name: 'mx.edgemail.test',
      maxMessageSize: 64 * 1024,
      maxHeaderSize: 8 * 1024,
      ratePerMinute: 0,
      greetingDelayMs: 0,
      closeTimeoutMs: 500,
      ...harness.options,
    },
  );
  return { server, store, logs };
}

export async function startInbound(harness: HarnessOptions = {}): Promise<RunningInbound> {
  const { server, store, logs } = createTestInbound(harness);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    port,
    server,
    store,
    logs,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
