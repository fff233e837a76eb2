// A Server-Sent Events client for tests: a real HTTP request with fetch, its
// body parsed by the WHATWG rules (fields id, event, data, retry; `:` comments;
// a blank line dispatches), independently of the service's own framing code.
import { eventually } from './wait.js';

export interface SseEvent {
  /** The `id:` field of this event; null when it had none. */
  id: string | null;
  /** The `event:` field; `message` when absent. */
  event: string;
  data: string;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** Every event dispatched so far, in order. */
  readonly events: SseEvent[];
  /** Resolves when the server ends the body (or the connection breaks). */
  readonly ended: Promise<void>;
  /** Waits until at least `n` events matching `which` arrived; returns those. */
  waitFor(n: number, which?: (e: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
}

/**
 * Opens `url`; a non-2xx answer is read whole as `body` (text) and `events`
 * stays empty. `onEvent` sees each event as it is dispatched (a benchmark
 * stamps its arrival there).
 */
export async function openSse(url: string, headers: Record<string, string> = {}, onEvent?: (e: SseEvent) => void): Promise<SseStream & { body?: string }> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const events: SseEvent[] = [];
  const waitFor = (n: number, which: (e: SseEvent) => boolean = () => true, timeoutMs = 10_000) =>
    eventually(async () => events.filter(which), (got) => got.length >= n, timeoutMs);
  if (!res.ok || !res.body) {
    return { status: res.status, headers: res.headers, events, ended: Promise.resolve(), waitFor, close: () => abort.abort(), body: await res.text() };
  }
  const ended = parse(res.body, (e) => { events.push(e); onEvent?.(e); });
  return { status: res.status, headers: res.headers, events, ended, waitFor, close: () => abort.abort() };
}

async function parse(body: ReadableStream<Uint8Array>, dispatch: (e: SseEvent) => void): Promise<void> {
  const decoder = new TextDecoder();
  let buffer = '';
  let current: { id: string | null; event: string; data: string[] } = { id: null, event: '', data: [] };
  const line = (text: string) => {
    if (text === '') {
      if (current.data.length) dispatch({ id: current.id, event: current.event || 'message', data: current.data.join('\n') });
      current = { id: null, event: '', data: [] };
      return;
    }
    if (text.startsWith(':')) return;
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'id') current.id = value;
    else if (field === 'event') current.event = value;
    else if (field === 'data') current.data.push(value);
  };
  try {
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let at: number;
      while ((at = buffer.search(/\r\n|\r|\n/)) !== -1) {
        const eol = buffer.startsWith('\r\n', at) ? 2 : 1;
        line(buffer.slice(0, at));
        buffer = buffer.slice(at + eol);
      }
    }
  } catch {
    // Aborted by close(), or the connection broke: the stream has ended either way.
  }
}
