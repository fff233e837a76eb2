// The metrics listener's Host rule (DNS rebinding: docs/operations.md) and its
// answers, on a real socket.
import { request } from 'node:http';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostAllowed, startMetricsServer, type MetricsServer } from './http.js';

describe('hostAllowed', () => {
  it.each(['127.0.0.1:9465', '127.0.0.1', '[::1]:9465', '[::1]', 'localhost:9465', 'LOCALHOST', '10.0.0.5:9465'])('serves %s (an address or localhost)', (host) => {
    expect(hostAllowed(host)).toBe(true);
  });
  it.each([undefined, '', 'attacker.example', 'attacker.example:9465', '127.0.0.1.nip.io:9465', 'localhost.attacker.example', '[attacker.example]:1'])('refuses %s', (host) => {
    expect(hostAllowed(host)).toBe(false);
  });
});

describe('the listener', () => {
  let server: MetricsServer;
  let ready = { ready: false, reason: 'the edge has not answered this node yet' } as { ready: boolean; reason?: string };
  beforeAll(async () => {
    const registry = new Registry();
    server = await startMetricsServer({ host: '127.0.0.1', port: 0, registry, ready: () => ready, log: { info() {}, warn() {}, error() {} } });
  });
  afterAll(() => server?.close());

  const get = (path: string, host?: string, method = 'GET') => new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, path, method, headers: host === undefined ? {} : { host } }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
    req.end();
  });

  it('answers /readyz 503 with the reason, then 200 once ready; /healthz 200; other paths 404; writes 405', async () => {
    expect(await get('/readyz')).toEqual({ status: 503, body: '{"status":"not ready","reason":"the edge has not answered this node yet"}\n' });
    ready = { ready: true };
    expect(await get('/readyz')).toEqual({ status: 200, body: '{"status":"ready"}\n' });
    expect((await get('/healthz')).status).toBe(200);
    expect((await get('/')).status).toBe(404);
    expect((await get('/metrics', undefined, 'POST')).status).toBe(405);
  });

  it('refuses a request naming another host, whatever the path', async () => {
    for (const path of ['/metrics', '/readyz', '/healthz']) {
      const refused = await get(path, 'rebound.attacker.example');
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body).error).toContain('Host must be an IP address or localhost');
    }
  });
});
