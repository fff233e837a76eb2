// A real HTTP receiver for webhook tests, on a free port of 127.0.0.1: it keeps
// every request (raw body bytes, headers, arrival time) and answers as the test
// tells it: a status, a redirect, a hang past the timeout, or a dropped connection.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  raw: Buffer;
  /** The body parsed as JSON. */
  body: any;
  receivedAt: number;
}

/** How to answer one request. */
export type Answer =
  | { status: number; body?: string; headers?: Record<string, string> }
  | { hang: true }
  | { drop: true };

export interface WebhookReceiver {
  /** The receiver's base URL; any path is accepted and recorded. */
  url: string;
  received(): ReceivedRequest[];
  /** Answers for the next requests, in order; after them, `fallback` (200 by default). */
  answer(...answers: Answer[]): void;
  setFallback(answer: Answer): void;
  clear(): void;
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  let queued: Answer[] = [];
  let fallback: Answer = { status: 200, body: 'ok' };
  const sockets = new Set<Socket>();
  const hung = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      let body: unknown;
      try { body = JSON.parse(raw.toString('utf8')); } catch { body = undefined; }
      requests.push({ method: req.method!, path: req.url!, headers: req.headers, raw, body, receivedAt: Date.now() });
      const answer = queued.shift() ?? fallback;
      if ('hang' in answer) { hung.add(res); return; }
      if ('drop' in answer) { req.socket.destroy(); return; }
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers });
      res.end(answer.body ?? '');
    });
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    received: () => [...requests],
    answer: (...answers) => { queued.push(...answers); },
    setFallback: (answer) => { fallback = answer; },
    clear: () => { requests.length = 0; queued = []; },
    async close() {
      for (const res of hung) res.destroy();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
