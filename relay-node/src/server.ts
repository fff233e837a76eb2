// Ports and graceful shutdown of the node's SMTP listeners: listen directly,
// or behind the PROXY v1/v2 front; on stop, refuse new connections, let open
// sessions finish (bounded), then end the rest with 421.
import type { AddressInfo, Server } from 'node:net';
import { createProxyFront } from './proxy/index.js';
import type { BoundedSmtpServer } from './smtp/index.js';
import type { ListenerReport } from '@edgemail/shared';
import type { Log } from './log.js';

export interface ListenOptions {
  port: number;
  host: string;
  /** PROXY protocol front: trusted balancers must send a v1/v2 header. */
  proxy?: { trusted: readonly string[]; headerTimeoutMs?: number };
  log: Log;
}

export interface RunningListener {
  /** The bound port (useful with port 0). */
  readonly port: number;
  /**
   * Stops accepting at once, waits up to `drainMs` for open sessions to end,
   * then answers the rest `421 4.3.2` and closes them. A message whose DATA
   * was cut off leaves nothing in the spool (its write is undone), so the
   * spool stays consistent and the sender retries.
   */
  close(drainMs: number): Promise<void>;
}

/**
 * How each direction's start-up (start-inbound.ts, start-submission.ts) opens
 * a port: node.ts `listen`s with `server` as one of its `listener`'s ports,
 * counted in the metrics and open sessions, and adds `report(bound port)` to
 * the listeners the heartbeat names.
 */
export type ServeListener = (
  server: BoundedSmtpServer, listener: 'inbound' | 'submission', port: number, proxy: ListenOptions['proxy'], report: (port: number) => ListenerReport,
) => Promise<RunningListener>;

/**
 * @example
 * const listener = await listen(smtpServer, { port: 2525, host: '127.0.0.1', log });
 * process.on('SIGTERM', () => listener.close(10_000));
 */
export async function listen(smtp: BoundedSmtpServer, options: ListenOptions): Promise<RunningListener> {
  let server: Server;
  if (options.proxy) {
    server = createProxyFront({
      trusted: options.proxy.trusted,
      headerTimeoutMs: options.proxy.headerTimeoutMs,
      handOver: (socket, peer) => smtp.connect(socket, peer),
      onDrop: (event) => options.log.warn('PROXY header missing or malformed; connection dropped', { reason: event.reason, detail: event.detail, peer: event.peer.remoteAddress }),
    });
  } else {
    server = smtp.server;
  }
  await new Promise<void>((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(options.port, options.host, () => {
      server.off('error', onError);
      resolve();
    });
  });
  // smtp-server's own listening socket reports errors through smtp; the front's come here.
  if (options.proxy) server.on('error', (err) => options.log.error('PROXY front error', { error: err.message }));
  const port = (server.address() as AddressInfo).port;

  return {
    port,
    async close(drainMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const deadline = Date.now() + drainMs;
      while (smtp.connections.size > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      for (const connection of smtp.connections) {
        connection.send(421, '4.3.2 Service shutting down, try again later');
        connection.close();
      }
      // smtp.close() also drops sockets still in a TLS handshake; its own grace
      // period is over already, so its callback may come at once.
      await new Promise<void>((resolve) => smtp.close(() => resolve()));
      // A client that never closes its half of an ended socket must not hold shutdown.
      await Promise.race([closed, new Promise((r) => setTimeout(r, 2000).unref())]);
    },
  };
}
