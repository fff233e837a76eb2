// What the inbound and submission listeners are built from: the options both
// take (their `*.max_*` settings, the name, the certificate) and the bounds of
// one session derived from them.
import type { SecureContext } from 'node:tls';
import type { SessionBounds } from './bounded-connection.js';
import { createSessionSlots, type SessionSlots } from './session-slots.js';

// A message still arriving at max_session_duration gets this long at most to
// end (less when idle_timeout is shorter): a client sending at a normal rate
// finishes, one trickling a byte per idle timeout is cut off.
const DATA_GRACE_MAX_MS = 60_000;
// smtp-server's own idle timeout when `socketTimeout` is not given.
const LIBRARY_IDLE_TIMEOUT_MS = 60_000;

/** The certificate the listener presents for STARTTLS and implicit TLS. */
export interface SmtpListenerTls {
  /** Default key and certificate chain (PEM), for clients without SNI or names the callback does not know. */
  key?: string | Buffer;
  cert?: string | Buffer;
  /** A ready default context, instead of `key` and `cert`. */
  secureContext?: SecureContext;
  /** Picks a context per handshake from the SNI name (the spec's certificate order); none falls back to the default. */
  SNICallback?: (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void;
}

export interface SmtpListenerOptions {
  /** Host name in the greeting, the EHLO reply and Authentication-Results. */
  name: string;
  /** `inbound.max_message_size`: advertised in EHLO SIZE, enforced at MAIL FROM and after the data. */
  maxMessageSize: number;
  /** `inbound.max_header_size`. */
  maxHeaderSize: number;
  /** `inbound.rate_per_minute`: new sessions per client address (IPv6 per /64); 0 disables. */
  ratePerMinute: number;
  /** `inbound.greeting_delay` in ms; 0 greets at once. */
  greetingDelayMs: number;
  /** Without it STARTTLS is not offered (smtp-server's built-in certificate has a published key). */
  tls?: SmtpListenerTls;
  /** Implicit TLS: the handshake precedes the greeting. Needs `tls`. */
  secure?: boolean;
  /** `idle_timeout`: how long the client may leave a command or its data unsent, ms (smtp-server's default 60 s); `421 4.4.2` past it. */
  idleTimeoutMs?: number;
  /** `max_sessions`: open sessions from all clients; one more gets `421 4.7.0`. 0 or none disables. */
  maxSessions?: number;
  /** `max_sessions_per_ip`: open sessions from one address (IPv6: one /64); one more gets `421 4.7.0`. 0 or none disables. */
  maxSessionsPerIp?: number;
  /**
   * The counter behind the two caps above, when several ports are one listener (a node's port 25 and
   * its implicit-TLS port): give each the same one, so the caps hold across them. When given,
   * `maxSessions` and `maxSessionsPerIp` are not read; when absent, a counter is made from them.
   */
  sessionSlots?: SessionSlots;
  /**
   * `max_session_duration`, ms: past it the session ends with `421 4.4.2`. A message whose data is still
   * arriving gets the smaller of `idleTimeoutMs` and 60 s more to end and be answered; after that the
   * session is cut off with `421 4.4.2` and the partial message dropped. 0 or none disables.
   */
  maxSessionDurationMs?: number;
  /** `max_messages_per_session`: MAIL FROM after that many messages gets `421 4.7.0`. 0 or none disables. */
  maxMessagesPerSession?: number;
  /** `max_noop_rset_per_session`: one NOOP or RSET past it gets `421 4.7.0`. 0 or none disables. */
  maxNoopRsetPerSession?: number;
  /** `max_commands_per_session`: one command past it that is not MAIL, RCPT, DATA or BDAT gets `421 4.7.0`. 0 or none disables. */
  maxCommandsPerSession?: number;
  /** How long `close()` lets open sessions finish before it ends them with 421 (smtp-server's default 30 s). */
  closeTimeoutMs?: number;
}

/** A session's bounds from the listener's options: the inbound and submission listeners keep the same ones. */
export function sessionBounds(options: SmtpListenerOptions): SessionBounds {
  return {
    greetingDelayMs: options.greetingDelayMs,
    slots: options.sessionSlots ?? createSessionSlots({ maxSessions: options.maxSessions ?? 0, maxPerAddress: options.maxSessionsPerIp ?? 0 }),
    maxDurationMs: options.maxSessionDurationMs ?? 0,
    dataGraceMs: Math.min(options.idleTimeoutMs || LIBRARY_IDLE_TIMEOUT_MS, DATA_GRACE_MAX_MS),
    maxNoopRset: options.maxNoopRsetPerSession ?? 0,
    maxCommands: options.maxCommandsPerSession ?? 0,
  };
}
