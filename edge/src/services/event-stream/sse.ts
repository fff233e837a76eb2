// Server-Sent Events framing (WHATWG HTML, "Server-sent events"): what the
// stream writes, and the resume position a client sends back.

const encoder = new TextEncoder();

/** One event; `data` is a single line of JSON, so it needs no splitting. */
export function sseEvent(id: number | null, name: string, data: string): Uint8Array {
  return encoder.encode(`${id === null ? '' : `id: ${id}\n`}event: ${name}\ndata: ${data}\n\n`);
}

/** A comment line: ignored by clients, it keeps proxies from closing an idle stream. */
export const sseComment = (text: string): Uint8Array => encoder.encode(`: ${text}\n\n`);

/** The reconnection delay a browser's EventSource waits after the stream ends, in ms. */
export const sseRetry = (ms: number): Uint8Array => encoder.encode(`retry: ${ms}\n\n`);

/** The largest event id accepted back: ids are counted from 1 and never reach it. */
const MAX_ID = Number.MAX_SAFE_INTEGER;

/**
 * The resume position: `Last-Event-ID` (what EventSource sends on reconnecting),
 * else the `last_event_id` query parameter. Undefined when neither is given;
 * a problem when the value is no event id (the caller answers 400 with it).
 */
export function lastEventId(header: string | undefined, query: string | undefined): number | undefined | { problem: string } {
  const [source, text] = header !== undefined && header !== '' ? ['Last-Event-ID header', header] : ['last_event_id', query];
  if (text === undefined || text === '') return undefined;
  if (!/^\d{1,16}$/.test(text) || Number(text) > MAX_ID) return { problem: `${source} must be an event id (a whole number from 0), got "${text.slice(0, 40)}"` };
  return Number(text);
}
