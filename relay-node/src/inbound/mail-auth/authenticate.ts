// SPF, DKIM and DMARC at ingest: the listener's verdict function. The checks
// themselves run in the verification pool's worker threads (verify-pool.ts,
// verify-message.ts), under a deadline.
import { hostname } from 'node:os';
import type { DNSResolver } from 'mailauth';
import { sharedVerifyPool, type VerifyPool } from './verify-pool.js';
import type { AuthenticateMessage } from './verdicts.js';

export interface AuthenticatorOptions {
  /** The DNS the checks ask (see `createDnsResolver`). */
  resolver: DNSResolver;
  /** This node's name in `Authentication-Results`; the host name by default. */
  mta?: string;
  /**
   * Longest the checks may hold a message back, in ms
   * (`relay_node.inbound.mail_auth_timeout`): SPF may chain ten lookups and a
   * sender chooses how much DKIM work its message asks for; past it the
   * verdicts are `temperror` and the message is kept. Default 10000.
   */
  deadlineMs?: number;
  /** Where the checks run; the process's shared pool by default. */
  pool?: VerifyPool;
  /** Told when a verification worker had to be terminated. */
  log?: { warn(message: string, fields?: Record<string, unknown>): void };
}

/**
 * A verdict function for the inbound listener: it reads the message once (as
 * a stream, without keeping the body) and answers the spec's `auth` object,
 * the From domain's DMARC policy and an Authentication-Results header. Never
 * throws: DNS trouble, a stream error and the deadline give `temperror`.
 *
 * @example
 * const authenticate = createAuthenticator({ resolver: createDnsResolver(config['dns.servers']), deadlineMs: config['relay_node.inbound.mail_auth_timeout'] });
 * const { auth, dmarcReject } = await authenticate(stream, { ip, helo, sender });
 */
export function createAuthenticator(options: AuthenticatorOptions): AuthenticateMessage {
  const mta = options.mta ?? hostname();
  const deadlineMs = options.deadlineMs ?? 10_000;
  return (message, context) =>
    (options.pool ?? sharedVerifyPool()).verify({ message, context, mta, resolver: options.resolver, deadlineMs, log: options.log });
}
