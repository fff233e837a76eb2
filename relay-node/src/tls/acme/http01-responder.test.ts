// The http-01 responder as the CA meets it: a real HTTP server on loopback.
// Its own tokens from memory, others from the edge (a stand-in function
// counting the lookups), and the guard that keeps a flood of made-up tokens
// from reaching the edge's chatter limit.
import { request } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { collectingLog, type LogLine } from '../../../test-support/inbound-harness.js';
import { createChallengeLookup } from './challenge-lookup.js';
import { createHttp01Responder, type Http01Responder } from './http01-responder.js';

const TOKEN = 'LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0';
const OTHER = 'evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA';
const inAMinute = () => new Date(Date.now() + 60_000).toISOString();
let responder: Http01Responder | undefined;
afterEach(async () => { await responder?.stop(); responder = undefined; });

async function start(edge: Map<string, string>, opts: { perMinute?: number; perClientPerMinute?: number; failing?: boolean; now?: () => number; maxConnections?: number } = {}) {
  const asked: string[] = [];
  const logs: LogLine[] = [];
  const log = collectingLog(logs);
  const lookup = createChallengeLookup({
    log,
    perMinute: opts.perMinute,
    perClientPerMinute: opts.perClientPerMinute,
    now: opts.now,
    fetch: async (token) => {
      asked.push(token);
      if (opts.failing) throw new Error('edge unavailable');
      const keyAuthorization = edge.get(token);
      return keyAuthorization === undefined ? null : { key_authorization: keyAuthorization, expires_at: inAMinute() };
    },
  });
  responder = createHttp01Responder({ port: 0, host: '127.0.0.1', lookup, log, maxConnections: opts.maxConnections });
  const port = await responder.start();
  const get = async (path: string, method = 'GET') => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
    return { status: res.status, text: await res.text(), type: res.headers.get('content-type') };
  };
  return { asked, logs, get, port };
}

describe('http-01 responder', () => {
  it('answers its own token from memory without asking the edge, until removed', async () => {
    const { asked, get } = await start(new Map());
    responder!.publish(TOKEN, `${TOKEN}.thumb`);
    expect(await get(`/.well-known/acme-challenge/${TOKEN}`)).toEqual({ status: 200, text: `${TOKEN}.thumb`, type: 'text/plain; charset=utf-8' });
    expect(asked).toEqual([]);
    responder!.remove(TOKEN);
    expect((await get(`/.well-known/acme-challenge/${TOKEN}`)).status).toBe(404);
    expect(asked).toEqual([TOKEN]);
  });

  it('answers another node\'s token from the edge, asking once', async () => {
    const { asked, get } = await start(new Map([[OTHER, `${OTHER}.thumb`]]));
    const answers = await Promise.all([1, 2, 3].map(() => get(`/.well-known/acme-challenge/${OTHER}`)));
    expect(answers.map((a) => [a.status, a.text])).toEqual([[200, `${OTHER}.thumb`], [200, `${OTHER}.thumb`], [200, `${OTHER}.thumb`]]);
    expect(await get(`/.well-known/acme-challenge/${OTHER}`)).toMatchObject({ status: 200 });
    expect(asked).toEqual([OTHER]);
  });

  it('serves nothing else: other paths 404, other methods 405, malformed tokens 404 without asking', async () => {
    const { asked, get } = await start(new Map());
    responder!.publish(TOKEN, `${TOKEN}.thumb`);
    expect((await get('/')).status).toBe(404);
    expect((await get('/.well-known/acme-challenge/')).status).toBe(404);
    expect((await get(`/.well-known/acme-challenge/${TOKEN}/x`)).status).toBe(404);
    expect((await get(`/.well-known/acme-challenge/${TOKEN}`, 'POST')).status).toBe(405);
    for (const bad of ['short', '..%2F..%2Fetc%2Fpasswd-padding-padding', `${'a'.repeat(129)}`, 'abc.def.ghi.jkl.mno.pqr.stu']) {
      expect([bad, (await get(`/.well-known/acme-challenge/${bad}`)).status]).toEqual([bad, 404]);
    }
    expect(asked).toEqual([]);
  });

  it('a flood of unknown tokens: each asked once, then at most perMinute lookups; the rest 404 unasked, logged once', async () => {
    const { asked, logs, get } = await start(new Map(), { perMinute: 5, now: () => 30_000 }); // one minute's window throughout
    const tokens = Array.from({ length: 12 }, (_, i) => `flood${String(i).padStart(2, '0')}${'x'.repeat(30)}`);
    for (const token of tokens) expect((await get(`/.well-known/acme-challenge/${token}`)).status).toBe(404);
    // Asked again: remembered as unknown.
    expect((await get(`/.well-known/acme-challenge/${tokens[0]}`)).status).toBe(404);
    expect(asked).toEqual(tokens.slice(0, 5));
    expect(logs.filter((l) => l.level === 'warn').map((l) => l.message)).toEqual(['acme challenge lookups at the edge rate-limited: unknown tokens answered 404 without asking']);
  });

  it('each client address has its own budget of edge lookups within the global one; known answers cost none', async () => {
    const { asked, logs, port } = await start(new Map([[OTHER, `${OTHER}.thumb`]]), { perMinute: 10, perClientPerMinute: 3, now: () => 30_000 });
    const from = (address: string, token: string) => new Promise<number>((resolve, reject) => {
      request({ host: '127.0.0.1', port, path: `/.well-known/acme-challenge/${token}`, localAddress: address }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      }).on('error', reject).end();
    });
    const tokens = Array.from({ length: 6 }, (_, i) => `spray${i}${'y'.repeat(30)}`);
    for (const token of tokens) expect(await from('127.0.0.2', token)).toBe(404);
    expect(await from('127.0.0.2', OTHER)).toBe(404); // over its budget: not asked
    expect(asked).toEqual(tokens.slice(0, 3));
    expect(await from('127.0.0.3', OTHER)).toBe(200);
    expect(await from('127.0.0.2', OTHER)).toBe(200); // known now: no lookup, no budget
    expect(asked).toEqual([...tokens.slice(0, 3), OTHER]);
    expect(logs.filter((l) => l.level === 'warn').map((l) => [l.message, l.fields])).toEqual([
      ['acme challenge lookups at the edge: a client over its budget is answered 404 without asking', { client: '127.0.0.2', per_client_per_minute: 3 }],
    ]);
  });

  it('an edge that cannot answer: 503 with Retry-After (the CA retries), and the miss is not remembered', async () => {
    const { asked, get } = await start(new Map(), { failing: true });
    const path = `/.well-known/acme-challenge/${OTHER}`;
    expect((await get(path)).status).toBe(503);
    expect((await get(path)).status).toBe(503);
    expect(asked).toEqual([OTHER, OTHER]);
  });

  it('holds at most maxConnections sockets: idle ones beyond the cap are closed at once, and it answers again when they go', async () => {
    const { get, port } = await start(new Map(), { maxConnections: 3 });
    responder!.publish(TOKEN, `${TOKEN}.thumb`);
    const open = (): Promise<{ closed: Promise<void> } & { destroy: () => void }> => new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => resolve({ closed, destroy: () => socket.destroy() }));
      const closed = new Promise<void>((done) => socket.on('close', () => done()));
      socket.on('error', () => {});
      socket.on('timeout', reject);
    });
    const idle = [await open(), await open(), await open()];
    const extra = await open();
    await extra.closed; // closed by the server without a byte sent
    for (const socket of idle) socket.destroy();
    await Promise.all(idle.map((s) => s.closed));
    await new Promise((r) => setTimeout(r, 50)); // the server counts the closes
    expect((await get(`/.well-known/acme-challenge/${TOKEN}`)).status).toBe(200);
  });
});
