// Polling and timing helpers for behaviour that completes after a response.

/** Polls `read` until `done` holds, or fails after `timeoutMs`. */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not reached within ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Rate-limit windows are fixed minutes: a burst that straddles a minute
 * boundary would be split across two windows. Wait until the burst fits.
 */
export async function awayFromWindowEdge(burstMs = 8_000): Promise<void> {
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 60_000 - burstMs) await new Promise((r) => setTimeout(r, 60_000 - intoWindow + 200));
}
