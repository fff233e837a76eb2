// Test-only: a small HTTP server playing the edge's two outbound routes
// (`POST /relay/v1/outbound/claim` and `/results`, docs/sending.md). The real
// routes are the edge's; this stands in for them in the node's unit tests.
// It also answers `GET /relay/v1/domains` and `POST /relay/v1/heartbeat`
// minimally, so a whole node can start against it.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { OutboundJob, OutboundResult } from '@edgemail/shared';

export interface FakeEdge {
  readonly url: string;
  readonly token: string;
  /** Jobs waiting to be claimed, oldest first. */
  readonly queue: OutboundJob[];
  /** The `max` of every claim, in order. */
  readonly claims: number[];
  /** Every results body, in order. */
  readonly reports: OutboundResult[][];
  /** Every result reported, flattened. */
  readonly results: OutboundResult[];
  /** Email ids whose results are answered `stale`. */
  readonly stale: Set<string>;
  /** Answer the next claims (or reports) with this status and body instead, once each entry. */
  readonly failClaims: { status: number; body: unknown; headers?: Record<string, string> }[];
  readonly failReports: { status: number; body: unknown }[];
  /** Resolves once `n` results in all have been reported. */
  waitForResults(n: number, timeoutMs?: number): Promise<OutboundResult[]>;
  close(): Promise<void>;
}

export async function startFakeEdge(token = 'myr_testnode_secret'): Promise<FakeEdge> {
  const queue: OutboundJob[] = [];
  const claims: number[] = [];
  const reports: OutboundResult[][] = [];
  const results: OutboundResult[] = [];
  const stale = new Set<string>();
  const failClaims: FakeEdge['failClaims'] = [];
  const failReports: FakeEdge['failReports'] = [];
  let waiters: (() => void)[] = [];

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const readJson = async (req: IncomingMessage): Promise<any> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return JSON.parse(Buffer.concat(chunks).toString() || '{}');
  };

  const server = createServer(async (req, res) => {
    if (req.headers.authorization !== `Bearer ${token}`) return send(res, 401, { error: 'invalid relay node credential' });
    const path = (req.url ?? '').split('?')[0];
    if (req.method === 'POST' && path === '/relay/v1/outbound/claim') {
      const { max } = await readJson(req);
      if (!Number.isInteger(max) || max < 1 || max > 100) return send(res, 400, { error: 'max must be 1..100' });
      claims.push(max);
      const failure = failClaims.shift();
      if (failure) return send(res, failure.status, failure.body, failure.headers);
      return send(res, 200, { jobs: queue.splice(0, max) });
    }
    if (req.method === 'POST' && path === '/relay/v1/outbound/results') {
      const body = await readJson(req);
      const list = body.results as OutboundResult[];
      if (!Array.isArray(list) || list.length < 1 || list.length > 100) return send(res, 400, { error: 'results must hold 1..100' });
      const failure = failReports.shift();
      if (failure) return send(res, failure.status, failure.body);
      reports.push(list);
      results.push(...list);
      for (const wake of waiters) wake();
      return send(res, 200, { accepted: list.filter((r) => !stale.has(r.email_id)).map((r) => r.email_id), stale: list.filter((r) => stale.has(r.email_id)).map((r) => r.email_id) });
    }
    if (req.method === 'GET' && path === '/relay/v1/domains') return send(res, 200, { domains: [], version: 'v0' });
    if (req.method === 'POST' && path === '/relay/v1/heartbeat') {
      await readJson(req);
      return send(res, 200, { node: {}, domains_version: 'v0' });
    }
    send(res, 404, { error: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url, token, queue, claims, reports, results, stale, failClaims, failReports,
    waitForResults(n, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (results.length < n) return false;
          clearTimeout(timer);
          waiters = waiters.filter((w) => w !== wake);
          resolve([...results]);
          return true;
        };
        const wake = () => void check();
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== wake);
          reject(new Error(`only ${results.length} of ${n} results reported within ${timeoutMs} ms`));
        }, timeoutMs);
        if (!check()) waiters.push(wake);
      });
    },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
