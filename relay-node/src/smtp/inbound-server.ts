// The MX-facing (inbound) listener: mail from the Internet to the domains
// projects registered. Ports, TLS reload and shutdown belong to server.ts.
import type { SecureContext } from 'node:tls';
import type { SMTPServerOptions } from 'smtp-server';
import { InboundSmtpServer } from './inbound-connection.js';
import { onConnect } from './on-connect.js';
import { onData } from './on-data.js';
import { onMailFrom } from './on-mail-from.js';
import { onRcptTo } from './on-rcpt-to.js';
import { createSessionRate } from './session-rate.js';
import type { InboundDeps } from './types.js';

// RFC 5321 allows 512 octets and extensions add parameters; Postfix's
// line_length_limit is 2048. Longer lines are refused by smtp-server.
const MAX_COMMAND_LENGTH = 2048;
// Postfix's smtpd_recipient_limit; RFC 5321 asks for at least 100.
const MAX_RECIPIENTS = 1000;

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
  /** Idle time before a session is dropped, in ms (smtp-server's default 60 s). */
  socketTimeoutMs?: number;
  /** Concurrent sessions before new ones get 421. */
  maxClients?: number;
  /** How long `close()` lets open sessions finish before it ends them with 421 (smtp-server's default 30 s). */
  closeTimeoutMs?: number;
}

/**
 * Builds the inbound listener (not yet listening). Rules: no AUTH (anyone may
 * deliver to an MX), no reverse lookups, RCPT only for registered domains,
 * SIZE advertised and enforced, a header cap, per-address session rate at
 * connect, the configurable greeting delay, STARTTLS when a certificate is
 * given, and 250 only after `deps.store` resolved.
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
    socketTimeout: options.socketTimeoutMs,
    closeTimeout: options.closeTimeoutMs,
    maxClients: options.maxClients,
    logger: false,
    onConnect: onConnect({ sessionRate: createSessionRate(options.ratePerMinute), log: deps.log }),
    onMailFrom: onMailFrom({ maxMessageSize: options.maxMessageSize }),
    onRcptTo: onRcptTo(deps),
    onData: onData({
      ...deps,
      name: options.name,
      limits: { maxMessageSize: options.maxMessageSize, maxHeaderSize: options.maxHeaderSize },
    }),
  };
  const server = new InboundSmtpServer(smtpOptions, options.greetingDelayMs);
  // updateSecureContext() rebuilds the default from key/cert; a context given ready-made replaces it.
  if (secureContext) server.secureContext.set('*', secureContext);
  // smtp-server reports socket and TLS errors as 'error' events; unheard, one would stop the process.
  server.on('error', (err: Error & { code?: string }) => deps.log.warn('inbound listener error', { error: err.message, code: err.code }));
  return server;
}
