// A project API key's rate window and row from one Durable Object call: the
// key's ApiKeyGate (durable-objects/api-key-gate.ts) counts the request and
// reads the key, sharing one read among the requests that arrive while another
// runs. When the object fails, the caller falls back to the two steps it
// replaces (RateLimiter call beside a look-up of its own), so neither the limit
// nor authentication depends on it.
import type { Context } from 'hono';
import { LruCache } from '@edgemail/shared';
import { limitOf, WINDOW_MS, type LimiterName } from './rate-limit.js';
import type { ApiKeyAdmission, AppEnv } from '../env.js';

// Ids kept per isolate, as the limiter keeps its own (deriving one hashes the name).
const ids = new LruCache<string, DurableObjectId>(10_000);
let failureLoggedInWindow = 0;

/**
 * @param limiter counted in the key's own window (by the hash of the whole
 *                token, so a made-up token sharing the key's prefix never spends it)
 * @returns the gate's answer, or null when it could not give one
 */
export async function admitApiKey(c: Context<AppEnv>, limiter: LimiterName | undefined, keyPrefix: string, tokenHash: string): Promise<ApiKeyAdmission | null> {
  const limit = limiter ? limitOf(c, limiter) : null;
  const namespace = c.env.API_KEY_GATE;
  const id = ids.get(tokenHash) ?? ids.set(tokenHash, namespace.idFromName(tokenHash));
  try {
    const admission = await namespace.get(id).admit(keyPrefix, tokenHash, limit, WINDOW_MS);
    // The gate works, the database does not: the caller's own look-up fails alike and answers 503
    // (its rate check counts this request a second time, in an outage only).
    if (admission.databaseUnavailable) return null;
    if (admission.verdict) c.set('rateLimit', admission.verdict);
    return admission;
  } catch (e) {
    const now = Date.now();
    const windowStart = now - (now % WINDOW_MS);
    if (failureLoggedInWindow !== windowStart) {
      failureLoggedInWindow = windowStart;
      console.error(`api key gate failed (${e instanceof Error ? e.message : String(e)}); counting in the RateLimiter and looking keys up from the Worker`);
    }
    return null;
  }
}
