// The edge client's retry rules against a small local HTTP server standing in
// for the edge: 429 waits Retry-After, 5xx and network failures back off and
// retry, 4xx and revocation stop at once. (Everything else about the channel
// is tested end to end against the real edge in test/relay-inbound.test.ts.)
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { makeJob } from '../../test-support/jobs.js';
import { createEdgeClient, encodeForward } from './client.js';
import { retrying } from './retry.js';
import {
  EdgeAnswerMalformedError,
  EdgeContractRefusedError,
  EdgeRateLimitedError,
  EdgeRefusedError,
  EdgeUnavailableError,
  NodeCredentialError,
  NodeRevokedError,
  parseRetryAfter,
} from './errors.js';

type Handler = (req: IncomingMessage, res: ServerResponse, body: Buffer) => void;
let server: Server | undefined;

type Call = { at: number; auth?: string; type?: string; headers: IncomingMessage['headers']; body: Buffer };
async function standIn(handlers: Handler[]): Promise<{ url: string; calls: Call[] }> {
  const calls: Call[] = [];
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      calls.push({ at: Date.now(), auth: req.headers.authorization, type: req.headers['content-type'], headers: req.headers, body });
      const handler = handlers[Math.min(calls.length - 1, handlers.length - 1)]!;
      handler(req, res, body);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, calls };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Handler => (_req, res) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
const domains = json(200, { domains: ['acme.test'], version: 'v1' });
const fastBackoff = { initialMs: 20, maxMs: 80 };

/** Closes the current stand-in and starts another. */
async function restart(handlers: Handler[]) {
  const s = server!;
  s.closeAllConnections();
  await new Promise((resolve) => s.close(resolve));
  return standIn(handlers);
}

afterEach(async () => {
  const s = server;
  server = undefined;
  if (!s) return;
  s.closeAllConnections();
  await new Promise((resolve) => s.close(resolve));
});

describe('edge client errors', () => {
  it('types each failure by what the caller must do', async () => {
    const { url } = await standIn([
      json(401, { error: 'relay node revoked' }),
      json(401, { error: 'invalid relay node credential' }),
      json(429, { error: 'rate limit exceeded' }, { 'retry-after': '7' }),
      json(400, { error: 'invalid meta: rcpt_to' }),
      json(503, { error: 'service unavailable' }),
    ]);
    const edge = createEdgeClient({ url, token: 'myr_abcdefgh_x' });
    await expect(edge.domains()).rejects.toBeInstanceOf(NodeRevokedError);
    await expect(edge.domains()).rejects.toBeInstanceOf(NodeCredentialError);
    const limited = await edge.domains().catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(EdgeRateLimitedError);
    expect((limited as EdgeRateLimitedError).retryAfterMs).toBe(7000);
    const refused = await edge.domains().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(EdgeRefusedError);
    expect(refused).toMatchObject({ status: 400, detail: 'invalid meta: rcpt_to', retryable: false });
    await expect(edge.domains()).rejects.toMatchObject({ status: 503, retryable: true });
  });

  it('types a 408 (the edge gave up reading the request) as retryable, every other 4xx as a refusal', async () => {
    const { url } = await standIn([json(408, { error: 'request timeout' }), json(403, { error: 'not for this node' }), domains]);
    const edge = createEdgeClient({ url, token: 'myr_abcdefgh_x' });
    const timedOut = await edge.domains().catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(EdgeUnavailableError);
    expect(timedOut).toMatchObject({ status: 408, retryable: true });
    await expect(edge.domains()).rejects.toMatchObject({ name: 'EdgeRefusedError', status: 403, retryable: false });
    // retrying() waits a 408 out: the next try is answered.
    const { url: url2, calls } = await restart([json(408, { error: 'request timeout' }), domains]);
    const answer = await retrying(() => createEdgeClient({ url: url2, token: 't' }).domains(), { backoff: fastBackoff });
    expect(answer.domains).toEqual(['acme.test']);
    expect(calls).toHaveLength(2);
  });

  it('reports a network failure and a timeout as retryable', async () => {
    const closed = createEdgeClient({ url: 'http://127.0.0.1:9', token: 't' });
    await expect(closed.domains()).rejects.toMatchObject({ name: 'EdgeUnavailableError', status: null, retryable: true });
    const { url } = await standIn([() => undefined]); // never answers
    const slow = createEdgeClient({ url, token: 't', timeoutMs: 100 });
    const err = await slow.domains().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EdgeUnavailableError);
    expect((err as Error).message).toContain('no answer within 100 ms');
  });

  it('sends the node credential, and the project key only for enrolment (whose 401 is not a revocation)', async () => {
    const { url, calls } = await standIn([domains, json(401, { error: 'invalid api key' })]);
    const edge = createEdgeClient({ url, token: 'myr_node' });
    await edge.domains();
    await expect(edge.enroll('myk_key', { name: 'mx1', version: '0.0.0' })).rejects.toBeInstanceOf(EdgeRefusedError);
    expect(calls.map((c) => c.auth)).toEqual(['Bearer myr_node', 'Bearer myk_key']);
  });
});

describe('retrying', () => {
  it('waits the Retry-After of a 429, then succeeds', async () => {
    const { url, calls } = await standIn([json(429, { error: 'slow down' }, { 'retry-after': '1' }), domains]);
    const edge = createEdgeClient({ url, token: 't' });
    const waits: number[] = [];
    const answer = await retrying(() => edge.domains(), { backoff: fastBackoff, onRetry: (_e, ms) => waits.push(ms) });
    expect(answer.domains).toEqual(['acme.test']);
    expect(waits).toEqual([1000]);
    expect(calls[1]!.at - calls[0]!.at).toBeGreaterThanOrEqual(990);
  });

  it('backs off on 5xx, growing, until the edge answers', async () => {
    const down = json(503, { error: 'down' });
    const { url, calls } = await standIn([down, down, down, domains]);
    const edge = createEdgeClient({ url, token: 't' });
    const waits: number[] = [];
    await retrying(() => edge.domains(), { backoff: { ...fastBackoff, random: () => 0.999 }, onRetry: (_e, ms) => waits.push(ms) });
    expect(calls).toHaveLength(4);
    expect(waits).toEqual([20, 40, 80]);
  });

  it('gives up at once on a refusal or a revocation, and when aborted', async () => {
    const { url, calls } = await standIn([json(400, { error: 'bad' }), json(401, { error: 'relay node revoked' }), json(503, {})]);
    const edge = createEdgeClient({ url, token: 't' });
    await expect(retrying(() => edge.domains(), { backoff: fastBackoff })).rejects.toBeInstanceOf(EdgeRefusedError);
    await expect(retrying(() => edge.domains(), { backoff: fastBackoff })).rejects.toBeInstanceOf(NodeRevokedError);
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stopping')), 50);
    await expect(retrying(() => edge.domains(controller.signal), { signal: controller.signal, backoff: { initialMs: 10_000 } })).rejects.toThrow('stopping');
    expect(calls).toHaveLength(3);
  });
});

describe('answers', () => {
  it('reads each job of a claim on its own: one without its envelope or with a newer edge\'s route kind is unreadable, named by field; the others come through', async () => {
    const { envelope: _, ...job } = makeJob('ann@example.org');
    const newer = { ...makeJob('cid@example.org'), priority: 'high', route: { kind: 'lmtp', socket: '/run/lmtp' } };
    const { url } = await standIn([json(200, { jobs: [makeJob('bob@example.org'), job, newer], next_poll_ms: 500 })]);
    const answer = await createEdgeClient({ url, token: 't' }).claimOutbound(3);
    expect(answer.jobs.map((j) => j.envelope.to)).toEqual(['bob@example.org']);
    expect(answer.unreadable).toEqual([
      { email_id: job.email_id, attempt: job.attempt, field: 'envelope', problem: expect.stringContaining('expected object') },
      { email_id: newer.email_id, attempt: newer.attempt, field: 'route.kind', problem: 'unknown route kind "lmtp" (this node knows "mx" and "smtp")' },
    ]);
  });

  it('a claim answer without its jobs list is refused whole, naming the route and the field', async () => {
    const { url } = await standIn([json(200, { jobs: 'none' })]);
    const err = await createEdgeClient({ url, token: 't' }).claimOutbound(2).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EdgeAnswerMalformedError);
    expect(err).toMatchObject({ route: 'POST /relay/v1/outbound/claim', status: 200, field: 'jobs', retryable: true });
  });

  it('names its relay contract in every request; a 426 is EdgeContractRefusedError (waited out, never a refusal of the request) and told to onContract once per answer', async () => {
    const heard: (string | null)[] = [];
    const { url, calls } = await standIn([json(426, { error: 'relay contract 9 is not served: this edge serves contract 1; upgrade the edge first (or run a node of contract 1)' }), domains]);
    const edge = createEdgeClient({ url, token: 't', contract: 9, onContract: (r) => heard.push(r) });
    const err = await edge.domains().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EdgeContractRefusedError);
    expect(err).toBeInstanceOf(EdgeUnavailableError);
    expect(err).toMatchObject({ status: 426, retryable: true });
    expect((err as Error).message).toBe('the edge does not serve this node\'s relay contract (426 on GET /relay/v1/domains): relay contract 9 is not served: this edge serves contract 1; upgrade the edge first (or run a node of contract 1)');
    await edge.domains();
    expect(heard).toEqual(['relay contract 9 is not served: this edge serves contract 1; upgrade the edge first (or run a node of contract 1)', null]);
    expect(calls.map((c) => c.headers['edgemail-relay-contract'])).toEqual(['9', '9']);
  });

  it('refuses a domains answer whose list is a string, and retries it like an unavailable edge', async () => {
    const { url, calls } = await standIn([json(200, { domains: 'x', version: 'v1' }), domains]);
    const edge = createEdgeClient({ url, token: 't' });
    const retried: unknown[] = [];
    const answer = await retrying(() => edge.domains(), { backoff: fastBackoff, onRetry: (e) => retried.push(e) });
    expect(retried).toHaveLength(1);
    expect(retried[0]).toBeInstanceOf(EdgeAnswerMalformedError);
    expect(retried[0]).toMatchObject({ route: 'GET /relay/v1/domains', field: 'domains', retryable: true });
    expect(answer).toEqual({ domains: ['acme.test'], version: 'v1' });
    expect(calls).toHaveLength(2);
  });

  it('takes an answer with keys it does not know (a newer edge), without them', async () => {
    const job = { ...makeJob('ann@example.org'), priority: 'high', message: { ...makeJob('ann@example.org').message, thread: 't1' } };
    const { url } = await standIn([
      json(200, { domains: ['acme.test'], full: [], version: 'v2', shards: 3 }),
      json(200, { jobs: [job], next_claim_after_ms: 500 }),
    ]);
    const edge = createEdgeClient({ url, token: 't' });
    expect(await edge.domains()).toEqual({ domains: ['acme.test'], full: [], version: 'v2' });
    const { jobs } = await edge.claimOutbound(1);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.envelope).toEqual(job.envelope);
    expect(jobs[0]).not.toHaveProperty('priority');
  });
});

describe('forwardInbound', () => {
  it('sends the meta JSON, the raw message and each attachment back to back, with their lengths announced', async () => {
    const { url, calls } = await standIn([json(200, { inbound_emails: [], duplicate: false })]);
    const edge = createEdgeClient({ url, token: 't' });
    const raw = 'Subject: hi\r\n\r\nbody\r\n';
    await edge.forwardInbound(encodeForward({
      meta: { spool_id: 'x', note: 'naïve' } as never,
      raw: new Blob([raw], { type: 'message/rfc822' }),
      attachments: [{ content: Buffer.from('PDF'), contentType: 'application/pdf', filename: 'a.pdf' }],
    }));
    const [call] = calls;
    const metaJson = JSON.stringify({ spool_id: 'x', note: 'naïve' });
    expect(call!.type).toBe('application/vnd.edgemail.inbound');
    // Bytes, not characters: the meta holds a non-ASCII letter.
    expect(call!.headers['edgemail-meta-length']).toBe(String(Buffer.byteLength(metaJson)));
    expect(call!.headers['content-length']).toBe(String(call!.body.length));
    expect(call!.headers['transfer-encoding']).toBeUndefined();
    expect(call!.body.toString('utf8')).toBe(`${metaJson}${raw}PDF`);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('30')).toBe(30_000);
    expect(parseRetryAfter(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThan(8000);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(null)).toBeNull();
  });
});

describe('GET /relay/v1/certificates', () => {
  it('sends If-None-Match with the generation held and answers null on 304; the bundle on 200 (none sent at start)', async () => {
    const bundle = { generation: 7, listeners: { inbound: null, submission: null }, acme: {}, self_signed: null, certificates: {} };
    const { url, calls } = await standIn([
      json(200, bundle, { etag: '"7"' }),
      (_req, res) => { res.writeHead(304, { etag: '"7"' }); res.end(); },
    ]);
    const client = createEdgeClient({ url, token: 'myr_test' });
    expect(await client.certificates(null)).toEqual(bundle);
    expect(calls[0]!.headers['if-none-match']).toBeUndefined();
    expect(await client.certificates(7)).toBeNull();
    expect(calls[1]!.headers['if-none-match']).toBe('"7"');
  });
});
