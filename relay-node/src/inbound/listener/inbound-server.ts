// The MX-facing (inbound) listener: mail from the Internet to the domains
// projects registered. Ports, TLS reload and shutdown belong to server.ts.
import type { SMTPServerOptions } from 'smtp-server';
import { BoundedSmtpServer } from '../../smtp/bounded-connection.js';
import { sessionBounds, type SmtpListenerOptions } from '../../smtp/listener-options.js';
import { onConnect } from '../../smtp/on-connect.js';
import { onData } from './on-data.js';
import { onMailFrom } from '../../smtp/on-mail-from.js';
import { onRcptTo } from './on-rcpt-to.js';
import { createSessionRate } from '../../smtp/session-rate.js';
import { logListenerError, type SessionError } from '../../smtp/listener-errors.js';
import { logRefusals } from '../../smtp/refusal-log.js';
import type { InboundDeps } from './types.js';

// RFC 5321 allows 512 octets and extensions add parameters; Postfix's
// line_length_limit is 2048. Longer lines are refused by smtp-server.
const MAX_COMMAND_LENGTH = 2048;
// Postfix's smtpd_recipient_limit; RFC 5321 asks for at least 100.
const MAX_RECIPIENTS = 1000;

/** The inbound listener's options (smtp/listener-options.ts), read from the `inbound.*` or `relay_node.inbound.*` settings. */
export type InboundServerOptions = SmtpListenerOptions;

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
export function createInboundServer(deps: InboundDeps, options: InboundServerOptions): BoundedSmtpServer {
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
    // The session caps are BoundedConnection's (session-slots.ts), not `maxClients`: those count a
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
  const server = new BoundedSmtpServer(smtpOptions, sessionBounds(options));
  // updateSecureContext() rebuilds the default from key/cert; a context given ready-made replaces it.
  if (secureContext) server.secureContext.set('*', secureContext);
  // smtp-server reports socket and TLS errors as 'error' events; unheard, one would stop the process.
  const listener = options.secure ? 'inbound (implicit TLS)' : 'inbound';
  server.on('error', (err: SessionError) => logListenerError(deps.log, listener, err));
  return server;
}
