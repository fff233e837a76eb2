// The http-01 responder (RFC 8555 §8.3) on `acme.http_port`: it answers
// `GET /.well-known/acme-challenge/<token>` with the key authorization, from
// this node's own orders (memory) first, else from the edge (another node is
// ordering; challenge-lookup.ts guards that path, per client address and in
// all). Everything else is 404 (or
// 405 for another method): this port serves nothing but challenges.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Log } from '../../log.js';
import { HTTP01_TOKEN, type ChallengeLookup } from './challenge-lookup.js';

const PREFIX = '/.well-known/acme-challenge/';

export interface Http01ResponderOptions {
  port: number;
  host: string;
  /** Tokens this node did not publish itself. */
  lookup: ChallengeLookup;
  log: Log;
  /** Connections held open at once; more are closed at accept. Default MAX_CONNECTIONS. */
  maxConnections?: number;
}

// Port 80 is open to anyone: without a cap, idle sockets (each held until
// headersTimeout) could pile up to the node's file-descriptor limit, which the
// SMTP listeners share. A CA's validation needs a handful.
export const MAX_CONNECTIONS = 256;

export interface Http01Responder {
  /** The bound port (after start). */
  readonly port: number;
  /** Answers `token` from memory from now on (this node's own order). */
  publish(token: string, keyAuthorization: string): void;
  remove(token: string): void;
  start(): Promise<number>;
  stop(): Promise<void>;
}

export function createHttp01Responder(options: Http01ResponderOptions): Http01Responder {
  const own = new Map<string, string>();
  let bound = 0;

  const answer = (res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
    res.end(text);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0]!;
    if (!path.startsWith(PREFIX)) return answer(res, 404, 'not found\n');
    if (req.method !== 'GET') return answer(res, 405, 'method not allowed\n', { allow: 'GET' });
    const token = path.slice(PREFIX.length);
    if (!HTTP01_TOKEN.test(token)) return answer(res, 404, 'not found\n');
    const mine = own.get(token);
    if (mine !== undefined) return answer(res, 200, mine);
    let found: string | null;
    try {
      found = await options.lookup(token, req.socket.remoteAddress);
    } catch (err) {
      options.log.warn('acme challenge lookup at the edge failed', { token, error: (err as Error).message });
      return answer(res, 503, 'try again later\n', { 'retry-after': '5' });
    }
    if (found === null) return answer(res, 404, 'not found\n');
    options.log.debug?.('acme challenge answered from the edge (another node is ordering)', { token });
    return answer(res, 200, found);
  }

  const server: Server = createServer((req, res) => {
    // The body of a GET is not read: drop whatever comes.
    req.resume();
    handle(req, res).catch((err: Error) => {
      options.log.warn('acme challenge request failed', { error: err.message });
      if (!res.headersSent) answer(res, 500, 'error\n');
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  server.maxConnections = options.maxConnections ?? MAX_CONNECTIONS;

  return {
    get port() { return bound; },
    publish(token, keyAuthorization) { own.set(token, keyAuthorization); },
    remove(token) { own.delete(token); },
    async start() {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port, options.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
      bound = (server.address() as AddressInfo).port;
      return bound;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
