// The event stream's bounds, read by its Durable Object and named in the
// route's description (docs/console.md, "Event stream").

/** Events kept for resuming: the last RETAIN_EVENTS, none older than RETAIN_MS. */
export const RETAIN_EVENTS = 10_000;
export const RETAIN_MS = 24 * 60 * 60 * 1000;
/** Open streams per project, and per session. */
export const MAX_STREAMS = 1_000;
export const MAX_STREAMS_PER_SESSION = 10;
