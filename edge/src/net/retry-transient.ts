// Calls to a Durable Object can fail for reasons of the platform, not of the
// call: the object was reset (a deploy), the connection to it was lost. Such
// errors carry `retryable: true`; Cloudflare's guidance is to try again on a
// new stub, with backoff, and never when the object is `overloaded` (more
// calls would only feed the overload).

export interface RetryOptions {
  /** Tries in all, the first included. */
  attempts?: number;
  /** The wait before the second try; doubled before each further one. */
  firstDelayMs?: number;
}

/** Whether an error thrown by a Durable Object call is worth another try. */
export function isTransient(e: unknown): boolean {
  const err = e as { retryable?: unknown; overloaded?: unknown } | null;
  return err?.retryable === true && err.overloaded !== true;
}

/**
 * Runs `call` (which should make a new stub each time) until it succeeds, the
 * error is not transient, or the tries run out; then throws the last error.
 */
export async function retryTransient<T>(call: () => Promise<T>, { attempts = 3, firstDelayMs = 50 }: RetryOptions = {}): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (e) {
      if (attempt >= attempts || !isTransient(e)) throw e;
      await new Promise((resolve) => setTimeout(resolve, firstDelayMs * 2 ** (attempt - 1)));
    }
  }
}
