// The one place requests are made: URL and headers, the timeout, retries with
// backoff and jitter where a retry is safe, and the mapping of refusals to
// error classes. Generated resource methods describe a request and call here.
import { ConnectionError, EdgemailError, errorFromResponse, RateLimitedError, InternalServerError, TimeoutError } from './errors.js';
import { Paginated, type PagingRule, type Query } from './paging.js';
import { VERSION } from './version.js';

export interface ClientOptions {
  /** The credential: a project key (`myk_…`) for `Edgemail`, a platform credential (`mya_…`) for `EdgemailAdmin`. */
  apiKey: string;
  /** Where the API is served, e.g. `https://mail.example.com` (the `/api/v1/…` paths are appended). */
  baseUrl: string;
  /** A `fetch` of your own (a proxy agent, a test double, instrumentation); the global one otherwise. */
  fetch?: typeof fetch;
  /** Milliseconds a request may take until its answer's headers arrive (default 60 000). */
  timeoutMs?: number;
  /** Retries after the first attempt where a retry is safe (default 2). */
  maxRetries?: number;
  /** The longest `Retry-After` (seconds) the client waits out by itself; a longer one is thrown (default 60). */
  maxRetryAfterSeconds?: number;
  /** Headers sent with every request (e.g. `X-Service-Project-Id` for a platform credential acting in a project). */
  headers?: Record<string, string>;
}

export interface RequestOptions {
  /** The send's `Idempotency-Key`; one is made when omitted, so the client's own retries send once. */
  idempotencyKey?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
  headers?: Record<string, string>;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: object;
  body?: unknown;
  /** The route takes an `Idempotency-Key` (sends): one is always sent, which makes retrying it safe. */
  idempotencyKey?: boolean;
  options?: RequestOptions;
}

/** Methods whose repetition has the effect of one call (PATCH is not among them). */
const IDEMPOTENT = new Set(['GET', 'PUT', 'DELETE']);
const RETRY_STATUSES = new Set([429, 500, 502, 503, 504]);
const sleep = (ms: number, signal?: AbortSignal) => new Promise<void>((resolve, reject) => {
  const timer = setTimeout(resolve, ms);
  signal?.addEventListener('abort', () => { clearTimeout(timer); reject(signal.reason); }, { once: true });
});

export class Transport {
  private readonly fetch: typeof fetch;
  private readonly baseUrl: string;

  constructor(private readonly options: ClientOptions) {
    if (!options.apiKey) throw new TypeError('apiKey is required');
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    this.fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  async json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send(spec, 'application/json');
    return (await response.json()) as T;
  }

  async empty(spec: RequestSpec): Promise<void> {
    const response = await this.send(spec, 'application/json');
    await response.body?.cancel();
  }

  /** The answer's body as it arrives, never buffered whole (a raw message may be 25 MB). */
  async stream(spec: RequestSpec): Promise<ReadableStream<Uint8Array>> {
    const response = await this.send(spec, '*/*');
    return response.body ?? new ReadableStream({ start: (c) => c.close() });
  }

  /** One parsed value per line of an `application/x-ndjson` answer, read as it streams. */
  ndjson<T>(spec: RequestSpec): AsyncIterable<T> {
    const self = this;
    return {
      async *[Symbol.asyncIterator]() {
        const body = await self.stream({ ...spec });
        const reader = body.getReader();
        const decoder = new TextDecoder();
        let buffered = '';
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) break;
            buffered += decoder.decode(value, { stream: true });
            let end: number;
            while ((end = buffered.indexOf('\n')) >= 0) {
              const line = buffered.slice(0, end).trim();
              buffered = buffered.slice(end + 1);
              if (line) yield JSON.parse(line) as T;
            }
          }
          buffered += decoder.decode();
          if (buffered.trim()) yield JSON.parse(buffered) as T;
        } finally {
          reader.releaseLock();
          await body.cancel().catch(() => {});
        }
      },
    };
  }

  paginate<Page, Item>(spec: RequestSpec, rule: PagingRule): Paginated<Page, Item> {
    return new Paginated<Page, Item>((query) => this.json<Page>({ ...spec, query }), (spec.query ?? {}) as Query, rule);
  }

  /** Makes the request, retrying where safe; resolves with a 2xx answer or throws the refusal's error class. */
  async send(spec: RequestSpec, accept: string): Promise<Response> {
    const options = spec.options ?? {};
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.apiKey}`,
      'User-Agent': `edgemail-typescript/${VERSION}`,
      Accept: accept,
      ...this.options.headers,
      ...options.headers,
    };
    if (spec.body !== undefined) headers['Content-Type'] = 'application/json';
    if (spec.idempotencyKey || options.idempotencyKey) headers['Idempotency-Key'] = options.idempotencyKey ?? crypto.randomUUID();
    const retrySafe = IDEMPOTENT.has(spec.method) || 'Idempotency-Key' in headers;
    const maxRetries = retrySafe ? (options.maxRetries ?? this.options.maxRetries ?? 2) : 0;
    const url = this.url(spec.path, spec.query as Query | undefined);
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);

    for (let attempt = 0; ; attempt++) {
      let failure: EdgemailError;
      try {
        const response = await this.attempt(url, { method: spec.method, headers, body }, options);
        if (response.ok) return response;
        failure = await errorFromResponse(response);
        if (!RETRY_STATUSES.has(response.status) || (failure instanceof RateLimitedError && failure.isPlanLimit)) throw failure;
      } catch (e) {
        if (e instanceof EdgemailError && !(e instanceof ConnectionError)) throw e;
        if (options.signal?.aborted) throw e;
        failure = e instanceof ConnectionError ? e : new ConnectionError(e instanceof Error ? e.message : String(e), e);
      }
      if (attempt >= maxRetries) throw failure;
      const asked = failure instanceof RateLimitedError || failure instanceof InternalServerError ? failure.retryAfter : undefined;
      if (asked !== undefined && asked > (this.options.maxRetryAfterSeconds ?? 60)) throw failure;
      await sleep(asked !== undefined ? asked * 1000 : backoff(attempt), options.signal);
    }
  }

  private async attempt(url: string, init: RequestInit, options: RequestOptions): Promise<Response> {
    const controller = new AbortController();
    const timeoutMs = options.timeoutMs ?? this.options.timeoutMs ?? 60_000;
    const timer = setTimeout(() => controller.abort(new TimeoutError(`no answer within ${timeoutMs} ms`)), timeoutMs);
    const onAbort = () => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      // The timeout covers the wait for the answer's headers; a streamed body then takes as long as it takes.
      return await this.fetch(url, { ...init, signal: controller.signal });
    } catch (e) {
      if (controller.signal.reason instanceof TimeoutError) throw controller.signal.reason;
      throw e;
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
    }
  }

  private url(path: string, query: Query | undefined): string {
    const url = new URL(this.baseUrl + path);
    for (const [name, value] of Object.entries(query ?? {})) {
      if (value === undefined || value === null) continue;
      for (const v of Array.isArray(value) ? value : [value]) url.searchParams.append(name, String(v));
    }
    return url.toString();
  }
}

/** Exponential backoff from half a second, capped at 8 s, with up to 25 % jitter below it. */
function backoff(attempt: number): number {
  const base = Math.min(8000, 500 * 2 ** attempt);
  return base * (1 - Math.random() * 0.25);
}
