// The one HTTP caller of the edge (docs/relay-protocol.md): every request the
// node makes goes through here, every answer is parsed with its schema of the
// shared contract (shared/src/relay-protocol/), and every failure comes out as
// a typed error (errors.ts) that says whether to stop, wait or retry.
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
import {
  CertificateAnswer,
  CertificateBundle,
  DomainsAnswer,
  EnrollAnswer,
  FORWARD_BATCH_CONTENT_TYPE,
  FORWARD_CONTENT_TYPE,
  ForwardAnswer,
  ForwardBatchAnswer,
  HeartbeatAnswer,
  MESSAGE_LENGTHS_HEADER,
  META_LENGTH_HEADER,
  META_LENGTHS_HEADER,
  OutboundClaimReading,
  OutboundRenewAnswer,
  OutboundResultsAnswer,
  RELAY_CONTRACT_HEADER,
  RELAY_CONTRACT_REFUSED_STATUS,
  RELAY_CONTRACT_VERSION,
  readAnswer,
  SubmissionAnswer,
  SubmissionAuthAnswer,
  SubmissionBatchAnswer,
  SubmissionLeaseAnswer,
  AcmeCertificateAnswer,
  AcmeChallengeAnswer,
  AcmeChallengeRemoved,
  AcmeFailureAnswer,
  AcmeLeaseAnswer,
  type AcmeCertificateRequest,
  type AcmeChallengeRequest,
  type SubmissionAuthRequest,
  type SubmissionRequest,
  type SubmissionBatchItem,
  type AnswerSchema,
  type EnrollRequest,
  type HeartbeatBody,
  type InboundMeta,
  type OutboundLeaseRef,
  type OutboundResult,
  type SelfSignedOffer,
} from '@edgemail/shared';

export interface EdgeClientOptions {
  /** The edge's base URL (`https://mail.example.com`); `/relay/v1/…` is appended. */
  url: string;
  /** The node credential (`myr_…`); not needed for `enroll`. */
  token?: string;
  /** The node's version, sent as its User-Agent. */
  version?: string;
  /** Time limit of a chatter request (heartbeat, domains, certificate), ms. Default 15000. */
  timeoutMs?: number;
  /** Time limit of one forward (a message up to the size limit, uploaded), ms. Default 300000. */
  forwardTimeoutMs?: number;
  /** Tests pass their own; the global fetch otherwise. */
  fetch?: typeof fetch;
  /**
   * The relay contract named in every request (`Edgemail-Relay-Contract`);
   * RELAY_CONTRACT_VERSION. Tests name another to play a node of another release.
   */
  contract?: number;
  /**
   * Told of each answer about the contract: the edge's refusal (426, its
   * message) or null once an answer shows it served (any answer but a 426).
   */
  onContract?: (refusal: string | null) => void;
}

/** One message part of a forward: the attachment's bytes and how to label them. */
export interface ForwardAttachment {
  content: Blob | Uint8Array;
  contentType: string;
  filename: string;
}

export interface ForwardRequest {
  meta: InboundMeta;
  /** The message bytes (a file-backed Blob for a large message: streamed, never read whole into memory). */
  raw: Blob;
  /** The same bytes, when the message is small enough to be held in memory: the body is then one buffer. */
  rawBytes?: Uint8Array;
  /** In `meta.parsed.attachments` order; empty when parsing failed. */
  attachments: ForwardAttachment[];
}

/** A forward as it goes over the wire: the meta JSON, the raw message and each attachment, back to back. */
export interface EncodedForward extends ForwardRequest {
  body: Blob | Uint8Array<ArrayBuffer>;
  /** Byte length of `body`. */
  size: number;
  /** Byte length of the meta JSON at the start of `body`. */
  metaLength: number;
}

/**
 * The body of `POST /relay/v1/inbound` (docs/relay-protocol.md), of known
 * size (the upload carries Content-Length). A message held in memory
 * (`rawBytes`) goes as one buffer, written to the socket at once: a Blob
 * body is read back chunk by chunk, which costs a small message more CPU
 * than the rest of its forward. A large one is a Blob of Blobs whose
 * file-backed raw part is read from disk as it is sent.
 */
export function encodeForward(request: ForwardRequest): EncodedForward {
  const metaBytes = Buffer.from(JSON.stringify(request.meta), 'utf8');
  if (request.rawBytes && request.attachments.every((a) => !(a.content instanceof Blob))) {
    const body: Uint8Array<ArrayBuffer> = Buffer.concat([metaBytes, request.rawBytes, ...request.attachments.map((a) => a.content as Uint8Array)]);
    return { ...request, body, size: body.length, metaLength: metaBytes.length };
  }
  const parts = request.attachments.map((a) => (a.content instanceof Blob ? a.content : new Blob([a.content as Uint8Array<ArrayBuffer>])));
  const body = new Blob([metaBytes, request.raw, ...parts]);
  return { ...request, body, size: body.size, metaLength: metaBytes.length };
}

/** A forward held in memory, which a batch can carry. */
export type InMemoryForward = EncodedForward & { body: Uint8Array<ArrayBuffer> };

export const inMemory = (request: EncodedForward): request is InMemoryForward => request.body instanceof Uint8Array;

/**
 * The body of `POST /relay/v1/inbound/batch` (docs/relay-protocol.md): every
 * meta, then every message's raw bytes and attachments, in the same order,
 * with each piece's length in the two headers.
 */
export function encodeForwardBatch(requests: InMemoryForward[]): { body: Uint8Array<ArrayBuffer>; headers: Record<string, string> } {
  const body: Uint8Array<ArrayBuffer> = Buffer.concat([
    ...requests.map((r) => r.body.subarray(0, r.metaLength)),
    ...requests.map((r) => r.body.subarray(r.metaLength)),
  ]);
  return {
    body,
    headers: {
      [META_LENGTHS_HEADER]: requests.map((r) => r.metaLength).join(','),
      [MESSAGE_LENGTHS_HEADER]: requests.map((r) => r.size - r.metaLength).join(','),
    },
  };
}

export interface EdgeClient {
  readonly url: string;
  /** `POST /relay/v1/enroll` with a project key holding `relay:write`. */
  enroll(key: string, body: EnrollRequest, signal?: AbortSignal): Promise<EnrollAnswer>;
  /** `POST /relay/v1/heartbeat`. */
  heartbeat(body: HeartbeatBody, signal?: AbortSignal): Promise<HeartbeatAnswer>;
  /** `GET /relay/v1/domains`. */
  domains(signal?: AbortSignal): Promise<DomainsAnswer>;
  /** `GET /relay/v1/certificate`; null on 404 (no pair made yet). */
  certificate(query: { listener: string; name: string }, signal?: AbortSignal): Promise<CertificateAnswer | null>;
  /**
   * `GET /relay/v1/certificates` with `If-None-Match` naming the generation
   * held (none at start): the bundle, or null when it is unchanged (304).
   */
  certificates(holding: number | null, signal?: AbortSignal): Promise<CertificateBundle | null>;
  /** `PUT /relay/v1/certificate/self-signed`: offers a pair, answers the stored one. */
  offerSelfSigned(pair: SelfSignedOffer, signal?: AbortSignal): Promise<CertificateAnswer>;
  /** `POST /relay/v1/inbound`: one message, its body made by `encodeForward`. */
  forwardInbound(request: EncodedForward, signal?: AbortSignal): Promise<ForwardAnswer>;
  /** `POST /relay/v1/inbound/batch`: several messages held in memory, one result each. */
  forwardInboundBatch(requests: InMemoryForward[], signal?: AbortSignal): Promise<ForwardBatchAnswer>;
  /**
   * `POST /relay/v1/outbound/claim`: up to `max` (1..100) due recipients, leased to this node.
   * Each job is read on its own: those that do not fit (a newer edge's enum value) come back in `unreadable`.
   */
  claimOutbound(max: number, signal?: AbortSignal): Promise<OutboundClaimReading>;
  /** `POST /relay/v1/outbound/results`: 1 to 100 attempt results; the edge names the stale ones. */
  reportOutbound(results: OutboundResult[], signal?: AbortSignal): Promise<OutboundResultsAnswer>;
  /** `POST /relay/v1/outbound/renew`: 1 to 200 leases this node holds, moved to `now() + outbound.lease`; the edge names those it no longer holds. */
  renewOutbound(leases: OutboundLeaseRef[], signal?: AbortSignal): Promise<OutboundRenewAnswer>;
  /** `POST /relay/v1/submission/auth`: whether an SMTP AUTH password may submit. */
  checkSubmissionKey(body: SubmissionAuthRequest, signal?: AbortSignal): Promise<SubmissionAuthAnswer>;
  /** `POST /relay/v1/submission/messages`: one submitted message, idempotent by its spool id. */
  submitMessage(body: SubmissionRequest, signal?: AbortSignal): Promise<SubmissionAnswer>;
  /** `POST /relay/v1/submission/lease`: the key judged again and what the node may answer from for `ttl_ms`. */
  leaseSubmission(body: SubmissionAuthRequest, signal?: AbortSignal): Promise<SubmissionLeaseAnswer>;
  /** `POST /relay/v1/submission/batch`: messages already answered 250, idempotent by their ids. */
  submitBatch(messages: SubmissionBatchItem[], signal?: AbortSignal): Promise<SubmissionBatchAnswer>;
  /** `POST /relay/v1/acme/leases`: may this node order `host`'s certificate now (docs/acme.md)? */
  acmeLease(host: string, signal?: AbortSignal): Promise<AcmeLeaseAnswer>;
  /** `POST /relay/v1/acme/leases/failure`: the order failed; the edge keeps `error` and holds the host back. */
  reportAcmeFailure(host: string, error: string, signal?: AbortSignal): Promise<AcmeFailureAnswer>;
  /** `PUT /relay/v1/acme/challenges`: an http-01 answer every node can serve. */
  publishAcmeChallenge(challenge: AcmeChallengeRequest, signal?: AbortSignal): Promise<AcmeChallengeAnswer>;
  /** `GET /relay/v1/acme/challenges/{token}`; null on 404 (unknown or expired). */
  acmeChallenge(token: string, signal?: AbortSignal): Promise<AcmeChallengeAnswer | null>;
  /** `DELETE /relay/v1/acme/challenges/{token}`. */
  removeAcmeChallenge(token: string, signal?: AbortSignal): Promise<AcmeChallengeRemoved>;
  /** `PUT /relay/v1/acme/certificates`: the issued pair, stored as `acme:<host>`. */
  storeAcmeCertificate(pair: AcmeCertificateRequest, signal?: AbortSignal): Promise<AcmeCertificateAnswer>;
}

const DEFAULT_TIMEOUT_MS = 15_000;
const DEFAULT_FORWARD_TIMEOUT_MS = 5 * 60_000;

/**
 * @example
 * const edge = createEdgeClient({ url: state.edge_url, token: state.token, version });
 * const { domains, version } = await edge.domains();
 */
export function createEdgeClient(options: EdgeClientOptions): EdgeClient {
  const base = options.url.replace(/\/+$/, '');
  const doFetch = options.fetch ?? fetch;
  const userAgent = `edgemail-relay-node/${options.version ?? 'dev'}`;
  const contract = String(options.contract ?? RELAY_CONTRACT_VERSION);

  async function call<T>(
    method: string,
    path: string,
    answer: AnswerSchema<T>,
    init: { body?: RequestInit['body']; headers?: Record<string, string>; json?: unknown; bearer?: string; timeoutMs: number; signal?: AbortSignal; allow404?: boolean; allow304?: boolean; nodeAuth?: boolean },
  ): Promise<T | null> {
    const route = `${method} ${path.split('?')[0]}`;
    const headers: Record<string, string> = { 'user-agent': userAgent, accept: 'application/json', [RELAY_CONTRACT_HEADER]: contract, ...init.headers };
    const bearer = init.bearer ?? options.token;
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    let body = init.body;
    if (init.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(init.json);
    }
    const timeout = AbortSignal.timeout(init.timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    let res: Response;
    try {
      res = await doFetch(`${base}${path}`, { method, headers, body, signal, redirect: 'error' });
    } catch (err) {
      if (init.signal?.aborted) throw init.signal.reason ?? err;
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const detail = timeout.aborted ? `no answer within ${init.timeoutMs} ms` : cause?.code ?? cause?.message ?? (err as Error).message;
      throw new EdgeUnavailableError(route, null, detail);
    }
    const text = await res.text().catch(() => '');
    if (res.status === RELAY_CONTRACT_REFUSED_STATUS) {
      const detail = errorText(text);
      options.onContract?.(detail);
      throw new EdgeContractRefusedError(route, detail);
    }
    options.onContract?.(null);
    if (res.ok) {
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        throw new EdgeUnavailableError(route, res.status, 'the answer is not JSON');
      }
      const read = readAnswer(answer, json);
      if (!read.ok) throw new EdgeAnswerMalformedError(route, res.status, read.field, read.problem);
      return read.answer;
    }
    if (res.status === 404 && init.allow404) return null;
    if (res.status === 304 && init.allow304) return null;
    const detail = errorText(text);
    if (res.status === 401 && init.nodeAuth !== false) {
      throw /revoked/i.test(detail) ? new NodeRevokedError(route) : new NodeCredentialError(route, detail);
    }
    if (res.status === 429) throw new EdgeRateLimitedError(route, parseRetryAfter(res.headers.get('retry-after')));
    // 408: the edge (or a proxy before it) gave up reading the request, a timeout like no answer; not a refusal of it.
    if (res.status >= 400 && res.status < 500 && res.status !== 408) throw new EdgeRefusedError(route, res.status, detail);
    throw new EdgeUnavailableError(route, res.status, detail);
  }

  const chatter = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const must = <T>(value: T | null): T => value as T;

  return {
    url: base,
    async enroll(key, body, signal) {
      return must(await call('POST', '/relay/v1/enroll', EnrollAnswer, { json: body, bearer: key, timeoutMs: chatter, signal, nodeAuth: false }));
    },
    async heartbeat(body, signal) {
      return must(await call('POST', '/relay/v1/heartbeat', HeartbeatAnswer, { json: body, timeoutMs: chatter, signal }));
    },
    async domains(signal) {
      return must(await call('GET', '/relay/v1/domains', DomainsAnswer, { timeoutMs: chatter, signal }));
    },
    async certificate(query, signal) {
      const q = new URLSearchParams({ listener: query.listener, name: query.name });
      return call('GET', `/relay/v1/certificate?${q}`, CertificateAnswer, { timeoutMs: chatter, signal, allow404: true });
    },
    async certificates(holding, signal) {
      const headers: Record<string, string> = holding === null ? {} : { 'if-none-match': `"${holding}"` };
      return call('GET', '/relay/v1/certificates', CertificateBundle, { headers, timeoutMs: chatter, signal, allow304: true });
    },
    async offerSelfSigned(pair, signal) {
      return must(await call('PUT', '/relay/v1/certificate/self-signed', CertificateAnswer, { json: pair, timeoutMs: chatter, signal }));
    },
    async forwardInbound(request, signal) {
      return must(await call('POST', '/relay/v1/inbound', ForwardAnswer, {
        body: request.body,
        // The answer is a few hundred bytes: a gzipped one costs more to inflate than to carry.
        headers: { 'content-type': FORWARD_CONTENT_TYPE, [META_LENGTH_HEADER]: String(request.metaLength), 'accept-encoding': 'identity' },
        timeoutMs: options.forwardTimeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS,
        signal,
      }));
    },
    async forwardInboundBatch(requests, signal) {
      const { body, headers } = encodeForwardBatch(requests);
      return must(await call('POST', '/relay/v1/inbound/batch', ForwardBatchAnswer, {
        body,
        headers: { 'content-type': FORWARD_BATCH_CONTENT_TYPE, ...headers, 'accept-encoding': 'identity' },
        timeoutMs: options.forwardTimeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS,
        signal,
      }));
    },
    async claimOutbound(max, signal) {
      return must(await call('POST', '/relay/v1/outbound/claim', OutboundClaimReading, { json: { max }, timeoutMs: chatter, signal }));
    },
    async reportOutbound(results, signal) {
      return must(await call('POST', '/relay/v1/outbound/results', OutboundResultsAnswer, { json: { results }, timeoutMs: chatter, signal }));
    },
    async renewOutbound(leases, signal) {
      return must(await call('POST', '/relay/v1/outbound/renew', OutboundRenewAnswer, { json: { leases }, timeoutMs: chatter, signal }));
    },
    async checkSubmissionKey(body, signal) {
      return must(await call('POST', '/relay/v1/submission/auth', SubmissionAuthAnswer, { json: body, timeoutMs: chatter, signal }));
    },
    async submitMessage(body, signal) {
      return must(await call('POST', '/relay/v1/submission/messages', SubmissionAnswer, { json: body, timeoutMs: options.forwardTimeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS, signal }));
    },
    async leaseSubmission(body, signal) {
      return must(await call('POST', '/relay/v1/submission/lease', SubmissionLeaseAnswer, { json: body, timeoutMs: chatter, signal }));
    },
    async submitBatch(messages, signal) {
      return must(await call('POST', '/relay/v1/submission/batch', SubmissionBatchAnswer, {
        json: { messages }, headers: { 'x-edgemail-messages': String(messages.length) }, timeoutMs: options.forwardTimeoutMs ?? DEFAULT_FORWARD_TIMEOUT_MS, signal,
      }));
    },
    async acmeLease(host, signal) {
      return must(await call('POST', '/relay/v1/acme/leases', AcmeLeaseAnswer, { json: { host }, timeoutMs: chatter, signal }));
    },
    async reportAcmeFailure(host, error, signal) {
      return must(await call('POST', '/relay/v1/acme/leases/failure', AcmeFailureAnswer, { json: { host, error }, timeoutMs: chatter, signal }));
    },
    async publishAcmeChallenge(challenge, signal) {
      return must(await call('PUT', '/relay/v1/acme/challenges', AcmeChallengeAnswer, { json: challenge, timeoutMs: chatter, signal }));
    },
    async acmeChallenge(token, signal) {
      return call('GET', `/relay/v1/acme/challenges/${encodeURIComponent(token)}`, AcmeChallengeAnswer, { timeoutMs: chatter, signal, allow404: true });
    },
    async removeAcmeChallenge(token, signal) {
      return must(await call('DELETE', `/relay/v1/acme/challenges/${encodeURIComponent(token)}`, AcmeChallengeRemoved, { timeoutMs: chatter, signal }));
    },
    async storeAcmeCertificate(pair, signal) {
      return must(await call('PUT', '/relay/v1/acme/certificates', AcmeCertificateAnswer, { json: pair, timeoutMs: chatter, signal }));
    },
  };
}

/** The edge's `{"error": "…"}` message, else the start of the body. */
function errorText(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === 'string') return parsed.error;
  } catch {
    // not JSON
  }
  return text.slice(0, 200) || 'no message';
}
