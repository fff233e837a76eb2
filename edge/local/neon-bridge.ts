// Local stand-in for Neon's proxy, so the production @neondatabase/serverless
// driver can reach a plain PostgreSQL server:
//   POST /sql   SQL-over-HTTP (neon(), sql.transaction(), drizzle neon-http)
//   GET  /v1    WebSocket piped to Postgres TCP (Pool / Client)
//   GET  /health
// Only for local programs: anything carrying `Origin` or a non-loopback `Host`
// (a web page, DNS rebinding) is refused before it touches PostgreSQL.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import pg from 'pg';
import { WebSocketServer, type WebSocket } from 'ws';
import {
  BadRequest, beginStatement, encodeError, encodeResult, isPostgresError, parseRequestBody, type HttpQuery,
} from './neon-http-format.js';
import { foreignReason, LOOPBACK } from './loopback-guard.js';

export interface NeonBridge {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  close(): Promise<void>;
}

export interface NeonBridgeOptions {
  /** 0 (the default) picks any free port. */
  port?: number;
  pgHost: string;
  pgPort: number;
  log?: (line: string) => void;
}

// Neon rejects request bodies above 10 MB; refusing early keeps memory bounded.
const MAX_BODY_BYTES = 10 * 1024 * 1024;

// The driver parses values itself by dataTypeID, so every column stays Postgres text.
const RAW_TEXT = { getTypeParser: () => (value: string) => value } as unknown as pg.CustomTypesConfig;

export async function startNeonBridge(opts: NeonBridgeOptions): Promise<NeonBridge> {
  const { pgHost, pgPort } = opts;
  const log = opts.log ?? (() => {});
  const pools = new Map<string, pg.Pool>();
  const tcpSockets = new Set<Socket>();

  /** One pool per connection string; only its user, password and database are used. */
  function poolFor(connectionString: string): pg.Pool {
    let pool = pools.get(connectionString);
    if (pool) return pool;
    let url: URL;
    try {
      url = new URL(connectionString);
    } catch {
      throw new BadRequest('Neon-Connection-String is not a valid URL');
    }
    const database = decodeURIComponent(url.pathname.slice(1));
    if (!url.username || !database) throw new BadRequest('Neon-Connection-String lacks a user or database');
    pool = new pg.Pool({
      host: pgHost,
      port: pgPort,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database,
      application_name: url.searchParams.get('application_name') ?? 'neon-bridge',
      types: RAW_TEXT,
      max: 32,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: 10_000,
    });
    // Idle clients die when the server stops or the database is dropped; that must not crash us.
    // A shutdown (57P01: Ctrl-C reaches PostgreSQL too, one process group) is no failure worth a line.
    pool.on('error', (err) => {
      if ((err as { code?: string }).code !== '57P01') log(`neon-bridge: idle connection to ${database} failed: ${err.message}`);
    });
    pools.set(connectionString, pool);
    return pool;
  }

  // Extended protocol even without params, as Neon does: one statement per query.
  // Each distinct text becomes a named statement, which every pooled connection
  // parses once and then reuses: the Worker sends the same few queries over and over.
  const statementNames = new Map<string, string>();
  const nameFor = (text: string) => {
    let name = statementNames.get(text);
    if (!name) {
      if (statementNames.size >= 5_000) return undefined; // a runaway of one-off texts: stop naming
      name = `s${statementNames.size}`;
      statementNames.set(text, name);
    }
    return name;
  };
  const run = (client: pg.PoolClient, q: HttpQuery) =>
    client.query({ name: nameFor(q.query), text: q.query, values: q.params, rowMode: 'array', queryMode: 'extended' } as pg.QueryArrayConfig);

  async function withClient<T>(pool: pg.Pool, fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await pool.connect();
    let broken = false;
    try {
      return await fn(client);
    } catch (err) {
      broken = !isPostgresError(err);
      throw err;
    } finally {
      // A session left inside a transaction (e.g. a lone BEGIN) must not go back to the pool.
      client.release(broken || client.getTransactionStatus() !== 'I');
    }
  }

  async function handleSql(req: IncomingMessage): Promise<unknown> {
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    const connectionString = header('neon-connection-string');
    if (!connectionString) throw new BadRequest('missing Neon-Connection-String header');
    const body = parseRequestBody(await readBody(req));
    // The 1.x driver always sends Neon-Array-Mode: true and Neon-Raw-Text-Output: true.
    const arrayMode = header('neon-array-mode') === 'true';
    const pool = poolFor(connectionString);

    if (body.kind === 'single') {
      return withClient(pool, async (client) => encodeResult(await run(client, body.query), arrayMode));
    }
    const begin = beginStatement({ get: header });
    return withClient(pool, async (client) => {
      await client.query(begin);
      try {
        const results = [];
        for (const q of body.queries) results.push(encodeResult(await run(client, q), arrayMode));
        await client.query('COMMIT');
        return { results };
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      }
    });
  }

  /** Refuses (and logs) a request no local program would send; see `foreignReason`. */
  function refusedForeign(req: IncomingMessage, what: string): boolean {
    const reason = foreignReason(req, port);
    if (reason) log(`neon-bridge: refused ${what} ${req.method} ${(req.url ?? '/').slice(0, 200)}: ${reason}`);
    return reason !== undefined;
  }

  async function onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (refusedForeign(req, 'request')) return send(res, 403, 'forbidden', 'text/plain');
    const path = new URL(req.url ?? '/', 'http://bridge').pathname;
    if (req.method === 'GET' && path === '/health') return send(res, 200, 'ok', 'text/plain');
    if (req.method !== 'POST' || path !== '/sql') return send(res, 404, 'not found', 'text/plain');
    try {
      send(res, 200, JSON.stringify(await handleSql(req)));
    } catch (err) {
      // 400 + JSON is what the driver turns into a NeonDbError with the SQLSTATE `code`.
      if (err instanceof BadRequest || isPostgresError(err)) return send(res, 400, JSON.stringify(encodeError(err)));
      log(`neon-bridge: /sql failed: ${err instanceof Error ? err.message : String(err)}`);
      send(res, 502, JSON.stringify(encodeError(err)));
    }
  }

  /** The driver asks for `/v1?address=host:port`; only the configured server is reachable. */
  function addressAllowed(address: string | null): boolean {
    if (!address) return false;
    const sep = address.lastIndexOf(':');
    const host = address.slice(0, sep).replace(/^\[(.*)\]$/, '$1');
    return Number(address.slice(sep + 1)) === pgPort && sameHost(host, pgHost);
  }

  const wss = new WebSocketServer({ noServer: true });

  function pipeToPostgres(ws: WebSocket): void {
    const tcp = connect({ host: pgHost, port: pgPort });
    tcpSockets.add(tcp);
    tcp.setNoDelay(true);
    // Writes before the TCP connect completes are queued by net.Socket.
    ws.on('message', (data) => tcp.write(data as Buffer));
    ws.on('close', () => tcp.end());
    ws.on('error', () => tcp.destroy());
    tcp.on('data', (chunk) => ws.send(chunk));
    tcp.on('error', (err) => log(`neon-bridge: postgres socket error: ${err.message}`));
    tcp.on('close', () => {
      tcpSockets.delete(tcp);
      ws.close();
    });
  }

  function onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    if (refusedForeign(req, 'WebSocket')) return refuseUpgrade(socket, 403, 'Forbidden');
    const url = new URL(req.url ?? '/', 'http://bridge');
    if (url.pathname !== '/v1') return refuseUpgrade(socket, 404, 'Not Found');
    const address = url.searchParams.get('address');
    if (!addressAllowed(address)) {
      log(`neon-bridge: refused WebSocket to ${address ?? '(no address)'}`);
      return refuseUpgrade(socket, 403, 'Forbidden');
    }
    wss.handleUpgrade(req, socket, head, pipeToPostgres);
  }

  const server = createServer((req, res) => void onRequest(req, res));
  // workerd keeps idle connections to the bridge longer than Node's 5 s default: a request sent
  // on one the bridge was closing that moment failed as "Network connection lost" (a 503).
  server.keepAliveTimeout = 120_000;
  server.on('upgrade', onUpgrade);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  log(`neon-bridge: listening on 127.0.0.1:${port} for postgres ${pgHost}:${pgPort}`);

  return {
    port,
    url: `http://127.0.0.1:${port}`,
    async close() {
      for (const ws of wss.clients) ws.terminate();
      for (const tcp of tcpSockets) tcp.destroy();
      wss.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections(); // idle keep-alive sockets would hold close() open
      await closed;
      await Promise.all([...pools.values()].map((pool) => pool.end()));
      pools.clear();
    },
  };
}

function sameHost(a: string, b: string): boolean {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  return x === y || (LOOPBACK.has(x) && LOOPBACK.has(y));
}

function send(res: ServerResponse, status: number, body: string, type = 'application/json'): void {
  res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) }).end(body);
}

function refuseUpgrade(socket: Duplex, status: number, reason: string): void {
  socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BadRequest('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
