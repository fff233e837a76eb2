// A net.Server in front of an smtp-server listener that reads PROXY v1/v2
// headers from trusted balancers (smtp-server's own `useProxy` knows v1 only).
import { createServer, type Server, type ServerOpts, type Socket } from 'node:net';
import { ipMatcher } from '@edgemail/shared';
import { canonicalAddress } from './canonical-address.js';
import { parseProxyHeader } from './parse-proxy-header.js';
import { validateProxySettings } from './proxy-settings.js';

/** The client a session belongs to, as handed to the SMTP listener. */
export interface ProxyPeer {
  remoteAddress: string;
  remotePort: number;
}

/** Why a trusted peer's connection was dropped before the SMTP session. */
export type ProxyDropReason = 'timeout' | 'invalid' | 'closed' | 'error';

export interface ProxyDropEvent {
  reason: ProxyDropReason;
  detail: string;
  /** The balancer's own address (the connecting peer). */
  peer: ProxyPeer;
}

export interface ProxyFrontOptions {
  /** IPs and CIDRs that must send a header; nobody else is asked for one. */
  trusted: readonly string[];
  /** How long a trusted peer has to send its whole header. Default 5000. */
  headerTimeoutMs?: number;
  /**
   * Starts the SMTP session; the socket is paused with any bytes after the
   * header put back. The listener implements it as
   * `smtpServer.connect(socket, { remoteAddress, remotePort })`.
   */
  handOver: (socket: Socket, peer: ProxyPeer) => void;
  /** Told about every dropped connection (for the log). */
  onDrop?: (event: ProxyDropEvent) => void;
}

// Postfix's smtpd_upstream_proxy_timeout: balancers send the header at once.
const DEFAULT_HEADER_TIMEOUT_MS = 5000;

/**
 * A `connection` handler for a `net.Server`: untrusted peers go straight to
 * `handOver` with their own address (a PROXY line from them reaches the SMTP
 * parser as an unknown command); trusted peers must send a complete v1 or v2
 * header within `headerTimeoutMs` and 4 KiB, or their socket is destroyed.
 * Throws (a ConfigError) when `trusted` is empty or has an entry that is not
 * an IP or CIDR: a front that trusts nobody is a misconfiguration.
 *
 * @example
 * const onConnection = createProxyConnectionHandler({
 *   trusted: ['10.0.0.0/8'],
 *   handOver: (socket, peer) => smtpServer.connect(socket, peer),
 * });
 * net.createServer(onConnection).listen(25);
 */
export function createProxyConnectionHandler(options: ProxyFrontOptions): (socket: Socket) => void {
  validateProxySettings(true, options.trusted);
  const isTrusted = ipMatcher(options.trusted);
  const timeoutMs = options.headerTimeoutMs ?? DEFAULT_HEADER_TIMEOUT_MS;
  return (socket) => {
    const own = ownPeer(socket);
    if (!own) {
      // Already closed before we saw it: no address to hand over.
      socket.destroy();
      return;
    }
    if (!isTrusted(own.remoteAddress)) {
      options.handOver(socket, own);
      return;
    }
    readHeader(socket, own, timeoutMs, options);
  };
}

/**
 * A `net.Server` running {@link createProxyConnectionHandler}; listen on it in
 * place of the SMTP server's own port.
 */
export function createProxyFront(options: ProxyFrontOptions, serverOptions: ServerOpts = {}): Server {
  return createServer(serverOptions, createProxyConnectionHandler(options));
}

function readHeader(socket: Socket, own: ProxyPeer, timeoutMs: number, options: ProxyFrontOptions): void {
  let received: Buffer = Buffer.alloc(0);
  let finished = false;

  const finish = (): void => {
    finished = true;
    clearTimeout(timer);
    socket.removeListener('readable', onReadable);
    socket.removeListener('end', onEnd);
    socket.removeListener('close', onClose);
    socket.removeListener('error', onError);
  };
  const drop = (reason: ProxyDropReason, detail: string): void => {
    if (finished) return;
    finish();
    // A late error on a socket we are destroying must not become uncaught.
    socket.on('error', () => {});
    socket.destroy();
    options.onDrop?.({ reason, detail, peer: own });
  };
  const onReadable = (): void => {
    let chunk: Buffer | null;
    while (!finished && (chunk = socket.read() as Buffer | null) !== null) {
      received = received.length ? Buffer.concat([received, chunk]) : chunk;
      const result = parseProxyHeader(received);
      if (result.kind === 'incomplete') continue;
      if (result.kind === 'invalid') return drop('invalid', result.reason);
      finish();
      // The rest is the client's first SMTP bytes: give them back to the stream
      // so the SMTP parser reads them as if we had never been here.
      const rest = received.subarray(result.bytesConsumed);
      if (rest.length) socket.unshift(rest);
      const peer = result.local || !result.source ? own : { remoteAddress: result.source.address, remotePort: result.source.port };
      options.handOver(socket, peer);
      return;
    }
  };
  const onEnd = (): void => drop('closed', 'peer ended the connection before a complete PROXY header');
  const onClose = (): void => drop('closed', 'connection closed before a complete PROXY header');
  const onError = (err: Error): void => drop('error', err.message);
  const timer = setTimeout(() => drop('timeout', `no complete PROXY header within ${timeoutMs} ms`), timeoutMs);

  socket.on('readable', onReadable);
  socket.on('end', onEnd);
  socket.on('close', onClose);
  socket.on('error', onError);
}

function ownPeer(socket: Socket): ProxyPeer | null {
  const raw = socket.remoteAddress;
  if (!raw) return null;
  return { remoteAddress: canonicalAddress(raw) ?? raw, remotePort: socket.remotePort ?? 0 };
}
