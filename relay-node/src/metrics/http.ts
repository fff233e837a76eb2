// The metrics and health listener (`relay_node.metrics.*`): GET /metrics in
// Prometheus text format, /healthz (the process answers) and /readyz (the
// listeners are bound and the edge answered lately). Loopback is not a
// boundary (DESIGN.md): a web page in the operator's browser can make the
// browser ask 127.0.0.1, and with DNS rebinding read the answer under its own
// name; so only requests whose Host is an IP address or `localhost` are served.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isIp } from '@edgemail/shared';
import type { Registry } from 'prom-client';
import type { Log } from '../log.js';

export interface Readiness {
  ready: boolean;
  /** Why not, in a sentence. */
  reason?: string;
}

export interface MetricsServerOptions {
  host: string;
  port: number;
  registry: Registry;
  ready(): Readiness;
  log: Log;
}

export interface MetricsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** Whether a Host header names this machine by address or as `localhost`: a DNS name could be rebound to it. */
export function hostAllowed(host: string | undefined): boolean {
  if (!host) return false;
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  const name = bracketed ? bracketed[1]! : host.replace(/:\d+$/, '');
  return name.toLowerCase() === 'localhost' || isIp(name);
}

function send(res: ServerResponse, status: number, body: unknown, type = 'application/json') {
  const text = typeof body === 'string' ? body : `${JSON.stringify(body)}\n`;
  res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });
  res.end(text);
}

async function answer(options: MetricsServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!hostAllowed(req.headers.host)) {
    return send(res, 403, { error: 'Host must be an IP address or localhost (this listener does not answer DNS names: DNS rebinding)' });
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') return send(res, 405, { error: 'only GET and HEAD are served' });
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  switch (path) {
    case '/metrics':
      return send(res, 200, await options.registry.metrics(), options.registry.contentType);
    case '/healthz':
      return send(res, 200, { status: 'alive' });
    case '/readyz': {
      const ready = options.ready();
      return ready.ready ? send(res, 200, { status: 'ready' }) : send(res, 503, { status: 'not ready', reason: ready.reason ?? 'not ready' });
    }
    default:
      return send(res, 404, { error: `not found: ${path} (served: /metrics, /healthz, /readyz)` });
  }
}

/**
 * @example
 * const server = await startMetricsServer({ host: '127.0.0.1', port: 9465, registry: metrics.registry, ready: () => ({ ready: true }), log });
 */
export async function startMetricsServer(options: MetricsServerOptions): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    answer(options, req, res).catch((err: unknown) => {
      options.log.error('metrics listener could not answer', { error: (err as Error).message });
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
      else res.destroy();
    });
  });
  // A scraper holds one keep-alive connection; nothing here is worth a slow client's socket for long.
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    }),
  };
}
