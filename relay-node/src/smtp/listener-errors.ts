// What the inbound and submission listeners log for an error smtp-server
// reports (a failed TLS handshake, a socket error mid-message): one warning
// naming the listener and the client (address and port), so an operator can
// tell which client failed which handshake.
import type { Log } from '../log.js';

/** An error as a session passes it on: smtp-server's fields, and the client's port (`tagClient`). */
export type SessionError = Error & {
  code?: string;
  remoteAddress?: string;
  remotePort?: number;
  localPort?: number;
  meta?: { stage?: string; tlsProtocol?: string | null; message?: string };
};

/** Adds the session's client address and port (and the port it came to) to an error it reports. */
export function tagClient(err: SessionError, session: { remoteAddress: string; remotePort: number; localPort: number }): SessionError {
  err.remoteAddress ??= session.remoteAddress;
  err.remotePort ??= session.remotePort;
  err.localPort ??= session.localPort;
  return err;
}

/**
 * smtp-server's `normalizeTLSError` marks a handshake's failure with
 * `meta.tlsProtocol` (null before one was agreed); OpenSSL's codes say so too.
 */
const isTlsFailure = (err: SessionError) =>
  (err.meta !== undefined && 'tlsProtocol' in err.meta) || /^(ERR_SSL|ERR_TLS|TLSError)/.test(err.code ?? '');

/**
 * `<listener> TLS handshake failed` or `<listener> listener error`, a
 * warning with `listener` (`inbound`, `submission`, `… (implicit TLS)`),
 * `client`, `client_port`, `port` (the listener's), `error` and `code`.
 */
export function logListenerError(log: Log, listener: string, err: SessionError): void {
  const fields = {
    listener, client: err.remoteAddress ?? null, client_port: err.remotePort ?? null, port: err.localPort ?? null,
    error: err.meta?.message ? `${err.message}: ${err.meta.message}` : err.message, code: err.code,
  };
  const kind = listener.split(' ')[0];
  if (isTlsFailure(err)) log.warn(`${kind} TLS handshake failed`, fields);
  else log.warn(`${kind} listener error`, fields);
}
