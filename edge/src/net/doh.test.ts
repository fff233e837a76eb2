// The client's reading of resolver answers, with a stand-in fetch. The same
// client against a real HTTP responder: test/webhook-targets.test.ts.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { joinTxt, resolveDns } from './doh.js';

let n = 0;
/** A resolver URL of its own per test, so that cached answers never leak between tests. */
const freshUrl = () => `https://doh.test/${++n}/dns-query`;

function resolver(answer: (url: URL) => Response | Promise<Response>) {
  const seen: { url: URL; accept: string | null }[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = new URL(String(input));
    seen.push({ url, accept: new Headers(init?.headers).get('accept') });
    return answer(url);
  }) as typeof globalThis.fetch;
  return { fetch, seen };
}

const json = (body: unknown, status = 200) =>
  new Response(typeof body === 'string' ? body : JSON.stringify(body), { status, headers: { 'content-type': 'application/dns-json' } });

afterEach(() => {
  vi.useRealTimers();
});

describe('resolveDns', () => {
  it('asks GET <dohUrl>?name=&type= for JSON, keeping the URL\'s own parameters', async () => {
    const r = resolver(() => json({ Status: 0, Answer: [{ name: 'example.org.', type: 1, TTL: 0, data: '93.184.215.14' }] }));
    const dohUrl = `${freshUrl()}?key=v`;
    expect(await resolveDns('example.org', 'A', { dohUrl, fetch: r.fetch })).toEqual({
      status: 'ok',
      records: [{ type: 'A', data: '93.184.215.14', ttl: 0 }],
    });
    expect(r.seen).toHaveLength(1);
    expect(r.seen[0]!.accept).toBe('application/dns-json');
    expect(Object.fromEntries(r.seen[0]!.url.searchParams)).toEqual({ key: 'v', name: 'example.org', type: 'A' });
  });

  it('keeps only records of the asked type from a CNAME chain', async () => {
    const r = resolver(() => json({
      Status: 0,
      Answer: [
        { name: 'www.example.org.', type: 5, TTL: 60, data: 'edge.example.net.' },
        { name: 'edge.example.net.', type: 28, TTL: 60, data: '2606:4700::1' },
        { name: 'edge.example.net.', type: 28, TTL: 30, data: '2606:4700::2' },
      ],
    }));
    const answer = await resolveDns('www.example.org', 'AAAA', { dohUrl: freshUrl(), fetch: r.fetch });
    expect(answer).toEqual({ status: 'ok', records: [
      { type: 'AAAA', data: '2606:4700::1', ttl: 60 },
      { type: 'AAAA', data: '2606:4700::2', ttl: 30 },
    ] });
  });

  it('NXDOMAIN, NODATA, and every other status as an error', async () => {
    const dohUrl = freshUrl();
    const by = (status: number, answer?: unknown[]) => resolver(() => json({ Status: status, ...(answer ? { Answer: answer } : {}) })).fetch;
    expect(await resolveDns('gone.example', 'A', { dohUrl, fetch: by(3) })).toEqual({ status: 'nxdomain' });
    expect(await resolveDns('v6only.example', 'A', { dohUrl, fetch: by(0) })).toEqual({ status: 'ok', records: [] });
    expect(await resolveDns('broken.example', 'A', { dohUrl, fetch: by(2) })).toEqual({ status: 'error', problem: 'resolver answered SERVFAIL (2)' });
    expect(await resolveDns('broken.example', 'A', { dohUrl, fetch: by(5) })).toEqual({ status: 'error', problem: 'resolver answered REFUSED (5)' });
    expect(await resolveDns('broken.example', 'A', { dohUrl, fetch: by(9) })).toEqual({ status: 'error', problem: 'resolver answered rcode (9)' });
  });

  it('HTTP failures, non-JSON and malformed bodies are errors, never throws', async () => {
    const dohUrl = freshUrl();
    const at = (res: () => Response | Promise<Response>) => resolveDns('x.example', 'A', { dohUrl, fetch: resolver(res).fetch });
    expect(await at(() => json('busy', 503))).toEqual({ status: 'error', problem: 'resolver answered http 503' });
    expect(await at(() => json('<html>'))).toEqual({ status: 'error', problem: 'resolver answer is not json' });
    expect(await at(() => json({ Answer: [] }))).toEqual({ status: 'error', problem: 'resolver answer has no status' });
    expect(await at(() => json({ Status: 0, Answer: {} }))).toEqual({ status: 'error', problem: 'resolver answer is malformed' });
    expect(await at(() => json({ Status: 0, Answer: [{ type: 1, TTL: 5 }] }))).toEqual({ status: 'error', problem: 'resolver answer is malformed' });
    expect(await at(() => Promise.reject(new TypeError('fetch failed')))).toEqual({ status: 'error', problem: 'resolver unreachable: fetch failed' });
    expect(await resolveDns('x.example', 'A', { dohUrl: 'not a url', fetch: resolver(() => json({ Status: 0 })).fetch }))
      .toEqual({ status: 'error', problem: 'resolver url not a url is not a url' });
  });

  it('gives up after timeoutMs', async () => {
    const hang = (async (_input: RequestInfo | URL, init?: RequestInit) =>
      new Promise<Response>((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)))) as typeof fetch;
    const started = Date.now();
    expect(await resolveDns('slow.example', 'A', { dohUrl: freshUrl(), fetch: hang, timeoutMs: 50 }))
      .toEqual({ status: 'error', problem: 'resolver did not answer within 50 ms' });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('reuses an answer for its TTL, capped at 300 s; TTL 0 and errors are not kept', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const dohUrl = freshUrl();
    let ttl = 600;
    const r = resolver(() => json({ Status: 0, Answer: [{ name: 'a.example.', type: 1, TTL: ttl, data: '192.0.2.1' }] }));
    await resolveDns('a.example', 'A', { dohUrl, fetch: r.fetch });
    await resolveDns('A.Example.', 'A', { dohUrl, fetch: r.fetch });
    expect(r.seen).toHaveLength(1);
    await resolveDns('a.example', 'A', { dohUrl, fetch: r.fetch, cache: false });
    expect(r.seen).toHaveLength(2);
    vi.advanceTimersByTime(301_000);
    ttl = 0;
    await resolveDns('a.example', 'A', { dohUrl, fetch: r.fetch });
    await resolveDns('a.example', 'A', { dohUrl, fetch: r.fetch });
    expect(r.seen).toHaveLength(4);

    const failing = resolver(() => json('down', 502));
    await resolveDns('b.example', 'A', { dohUrl, fetch: failing.fetch });
    await resolveDns('b.example', 'A', { dohUrl, fetch: failing.fetch });
    expect(failing.seen).toHaveLength(2);
  });

  it('keeps NXDOMAIN for the SOA TTL in Authority, and not at all without one', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const dohUrl = freshUrl();
    const withSoa = resolver(() => json({ Status: 3, Authority: [{ name: 'example.', type: 6, TTL: 30, data: 'ns. host. 1 2 3 4 30' }] }));
    await resolveDns('gone.example', 'A', { dohUrl, fetch: withSoa.fetch });
    await resolveDns('gone.example', 'A', { dohUrl, fetch: withSoa.fetch });
    expect(withSoa.seen).toHaveLength(1);
    vi.advanceTimersByTime(31_000);
    await resolveDns('gone.example', 'A', { dohUrl, fetch: withSoa.fetch });
    expect(withSoa.seen).toHaveLength(2);

    const bare = resolver(() => json({ Status: 3 }));
    await resolveDns('gone2.example', 'A', { dohUrl, fetch: bare.fetch });
    await resolveDns('gone2.example', 'A', { dohUrl, fetch: bare.fetch });
    expect(bare.seen).toHaveLength(2);
  });

  it('joins TXT strings', async () => {
    const r = resolver(() => json({ Status: 0, Answer: [
      { name: 'sel._domainkey.example.', type: 16, TTL: 0, data: '"v=DKIM1; k=rsa; p=MIIB" "IjANBg"' },
      { name: 'example.', type: 16, TTL: 0, data: 'v=spf1 -all' },
    ] }));
    expect(await resolveDns('example', 'TXT', { dohUrl: freshUrl(), fetch: r.fetch })).toEqual({ status: 'ok', records: [
      { type: 'TXT', data: 'v=DKIM1; k=rsa; p=MIIBIjANBg', ttl: 0 },
      { type: 'TXT', data: 'v=spf1 -all', ttl: 0 },
    ] });
  });
});

describe('joinTxt', () => {
  it.each([
    ['"hello"', 'hello'],
    ['"a" "b" "c"', 'abc'],
    ['""', ''],
    ['"say \\"hi\\"" "back\\\\slash"', 'say "hi"back\\slash'],
    ['"caf\\195\\169"', 'café'],
    ['"emoji 🎉 ok"', 'emoji 🎉 ok'],
    ['unquoted as is', 'unquoted as is'],
  ])('%s → %s', (data, joined) => {
    expect(joinTxt(data)).toBe(joined);
  });
});
