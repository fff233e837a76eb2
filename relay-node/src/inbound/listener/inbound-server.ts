// The MX-facing (inbound) listener: mail from the Internet to the domains
// projects registered. Ports, TLS reload and shutdown belong to server.ts.
import type { SecureContext } from 'node:tls';
import type { SMTPServerOptions } from 'smtp-server';
import { InboundSmtpServer, type SessionBounds } from './inbound-connection.js';
import { onConnect } from './on-connect.js';
import { onData } from './on-data.js';
import { onMailFrom } from './on-mail-from.js';
import { onRcptTo } from './on-rcpt-to.js';
import { createSessionRate } from './session-rate.js';
import { createSessionSlots, type SessionSlots } from './session-slots.js';
import { logListenerError, type SessionError } from './listener-errors.js';
import { logRefusals } from './refusal-log.js';
import type { InboundDeps } from './types.js';

// RFC 5321 allows 512 octets and extensions add parameters; Postfix's
// line_length_limit is 2048. Longer lines are refused by smtp-server.
const MAX_COMMAND_LENGTH = 2048;
// Postfix's smtpd_recipient_limit; RFC 5321 asks for at least 100.
const MAX_RECIPIENTS = 1000;
// A message still arriving at max_session_duration gets this long at most to
// end (less when idle_timeout is shorter): a client sending at a normal rate
// finishes, one trickling a byte per idle timeout is cut off.
const DATA_GRACE_MAX_MS = 60_000;
// smtp-server's own idle timeout when `socketTimeout` is not given.
const LIBRARY_IDLE_TIMEOUT_MS = 60_000;

/** The certificate the listener presents for STARTTLS and implicit TLS. */
export interface InboundTls {
  /** Default key and certificate chain (PEM), for clients without SNI or names the callback does not know. */
  key?: string | Buffer;
  cert?: string | Buffer;
  /** A ready default context, instead of `key` and `cert`. */
  secureContext?: SecureContext;
  /** Picks a context per handshake from the SNI name (the spec's certificate order); none falls back to the default. */
  SNICallback?: (servername: string, cb: (err: Error | null, ctx?: SecureContext) => void) => void;
}

export interface InboundServerOptions {
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
  tls?: InboundTls;
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

/**
 * Builds the inbound listener (not yet listening). Rules: no AUTH (anyone may
 * deliver to an MX), no reverse lookups, RCPT only for registered domains,
 * SIZE advertised and enforced, a header cap, per-address session rate at
 * connect, caps on open sessions (all, per address), on a session's length,
 * idle time, messages and NOOP/RSET, the configurable greeting delay, STARTTLS
 * when a certificate is given, `452 4.3.1` while `deps.admission` says the
 * spool cannot take mail, and 250 only after `deps.store` resolved.
 *
 * @example
 * const server = createInboundServer(deps, { name: 'mx.example.com', maxMessageSize: 26_214_400,
 *   maxHeaderSize: 262_144, ratePerMinute: 120, greetingDelayMs: 0, tls: { key, cert } });
 * server.listen(Number(process.env.EDGEMAIL_INBOUND_PORT ?? 2525), '127.0.0.1');
 * // or, behind the PROXY front: server.connect(socket, { remoteAddress, remotePort })
 */
export function createInboundServer(deps: InboundDeps, options: InboundServerOptions): InboundSmtpServer {
  if (options.secure && !options.tls) throw new Error('inbound listener: implicit TLS (secure) needs a certificate (tls)');
  const { secureContext, ...tls } = options.tls ?? {};
  const smtpOptions: SMTPServerOptions = {
    ...tls,
    name: options.name,
    // Implicit TLS through needsUpgrade: the session does the handshake itself,
    // so a socket handed over by the PROXY front gets one too.
    secure: !!options.secure,
    needsUpgrade: !!options.secure,
    disabledCommands: options.tls ? ['AUTH'] : ['AUTH', 'STARTTLS'],
    authOptional: true,
    disableReverseLookup: true,
    hideENHANCEDSTATUSCODES: false,
    size: options.maxMessageSize,
    maxCommandLength: MAX_COMMAND_LENGTH,
    maxRecipients: MAX_RECIPIENTS,
    // The idle timeout is the library's: it counts only while the client owes us input.
    socketTimeout: options.idleTimeoutMs,
    closeTimeout: options.closeTimeoutMs,
    // The session caps are InboundConnection's (session-slots.ts), not `maxClients`: those count a
    // session until its socket has closed, not only until the server has ended it.
    logger: false,
    onConnect: onConnect({ sessionRate: createSessionRate(options.ratePerMinute), log: deps.log }),
    onMailFrom: logRefusals(deps.log, 'inbound sender refused', 'from', onMailFrom({ maxMessageSize: options.maxMessageSize, maxMessagesPerSession: options.maxMessagesPerSession ?? 0, admission: deps.admission })),
    onRcptTo: logRefusals(deps.log, 'inbound recipient refused', 'to', onRcptTo(deps)),
    onData: onData({
      ...deps,
      name: options.name,
      limits: { maxMessageSize: options.maxMessageSize, maxHeaderSize: options.maxHeaderSize },
    }),
  };
  const server = new InboundSmtpServer(smtpOptions, sessionBounds(options));
  // updateSecureContext() rebuilds the default from key/cert; a context given ready-made replaces it.
  if (secureContext) server.secureContext.set('*', secureContext);
  // smtp-server reports socket and TLS errors as 'error' events; unheard, one would stop the process.
  const listener = options.secure ? 'inbound (implicit TLS)' : 'inbound';
  server.on('error', (err: SessionError) => logListenerError(deps.log, listener, err));
  return server;
}

/** A session's bounds from the listener's options: the inbound and submission listeners keep the same ones. */
export function sessionBounds(options: InboundServerOptions): SessionBounds {
  return {
    greetingDelayMs: options.greetingDelayMs,
    slots: options.sessionSlots ?? createSessionSlots({ maxSessions: options.maxSessions ?? 0, maxPerAddress: options.maxSessionsPerIp ?? 0 }),
    maxDurationMs: options.maxSessionDurationMs ?? 0,
    dataGraceMs: Math.min(options.idleTimeoutMs || LIBRARY_IDLE_TIMEOUT_MS, DATA_GRACE_MAX_MS),
    maxNoopRset: options.maxNoopRsetPerSession ?? 0,
    maxCommands: options.maxCommandsPerSession ?? 0,
  };
}
