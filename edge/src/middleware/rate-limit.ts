// HTTP request rate limits: fixed one-minute windows kept in the RateLimiter
// Durable Object, one Durable Object call per admitted request (a project API
// key's window is kept by its ApiKeyGate instead: api-key-admission.ts). Every limited
// response carries RateLimit-* headers; a refusal is 429 with Retry-After.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { addressBucket, FixedWindows, LruCache, type Config, type WindowVerdict } from '@edgemail/shared';
import { ApiError } from '../http/errors.js';
import type { AppEnv } from '../env.js';

export const WINDOW_MS = 60_000;

/** The limiters of the spec's table: the setting holding each one's per-minute limit. */
export const limiters = {
  api: 'ratelimit.api_per_minute',
  login: 'ratelimit.login_per_minute',
  oidc: 'ratelimit.oidc_per_minute',
  ses_webhook: 'ratelimit.ses_webhook_per_minute',
  relay_node_chatter: 'ratelimit.relay_node_chatter_per_minute',
  relay_node_inbound: 'ratelimit.relay_node_inbound_per_minute',
  unsubscribe: 'ratelimit.unsubscribe_per_minute',
  webhook_replay: 'ratelimit.webhook_replay_per_minute',
  // Counted in each isolate, never by the Durable Object (define-tracking-route.ts).
  tracking: 'ratelimit.tracking_per_minute',
} as const satisfies Record<string, keyof Config>;
export type LimiterName = keyof typeof limiters;

/** The bucket a request is counted in, for limiters keyed on the request alone. */
export type BucketOf = (c: Context<AppEnv>) => string;

/** Per client address; IPv6 by /64 (see `addressBucket`). */
export const addressBucketOf: BucketOf = (c) => `ip:${addressBucket(c.get('clientIp'))}`;

/**
 * A presented credential's bucket: the hash of the whole token, so only a
 * request holding the exact token spends it (a key's public prefix would let
 * anyone who has seen it lock the key out).
 */
export const credentialBucket = (tokenHash: string) => `credential:${tokenHash}`;

function headers(v: WindowVerdict): Record<string, string> {
  return {
    'RateLimit-Limit': String(v.limit),
    'RateLimit-Remaining': String(v.remaining),
    'RateLimit-Reset': String(Math.max(0, Math.ceil((v.resetAt - Date.now()) / 1000))),
  };
}

type LimiterNamespace = AppEnv['Bindings']['RATE_LIMITER'];
// Ids kept per isolate: deriving one hashes its name. (Stubs cannot be kept:
// they are bound to the request that made them.)
const ids = new LruCache<string, DurableObjectId>(10_000);

function limiterStub(namespace: LimiterNamespace, bucket: string) {
  const id = ids.get(bucket) ?? ids.set(bucket, namespace.idFromName(bucket));
  return namespace.get(id);
}

// When the Durable Object cannot be reached the limit must not vanish just
// when it is needed: each isolate then counts the bucket itself (so the
// ceiling becomes the limit times the isolates), and says so once per window.
const fallbackWindows = new FixedWindows(10_000);
const unreachableLoggedAt = new Map<LimiterName, number>();

function logUnreachable(name: LimiterName, error: unknown): void {
  const now = Date.now();
  const windowStart = now - (now % WINDOW_MS);
  if (unreachableLoggedAt.get(name) === windowStart) return;
  unreachableLoggedAt.set(name, windowStart);
  const reason = error instanceof Error ? error.message : String(error);
  console.error(`rate limiter ${name} unreachable (${reason}); counting in this isolate until the window ends`);
}

/**
 * Counts the request in `bucket` of a limiter: one Durable Object call, or the
 * isolate's own window when the object cannot be reached. Null when the
 * limiter is off. Never rejects. `count` > 1 counts that many at once (a
 * batch of forwarded messages); the verdict's `granted` says how many passed.
 */
export async function checkLimit<E extends AppEnv>(c: Context<E>, name: LimiterName, bucket: string, count = 1): Promise<WindowVerdict | null> {
  const limit = limitOf(c, name);
  if (limit === null) return null;
  const key = `${name}|${bucket}`;
  const verdict = count === 1
    ? await hitOrFallBack(name, key, limit, () => limiterStub(c.env.RATE_LIMITER, key).hit(limit, WINDOW_MS))
    : await hitOrFallBack(name, key, limit, () => limiterStub(c.env.RATE_LIMITER, key).take(limit, WINDOW_MS, count), count);
  c.set('rateLimit', verdict);
  return verdict;
}

/** A limiter's per-minute limit, or null when it is off (the master switch, or 0). */
export function limitOf<E extends AppEnv>(c: Context<E>, name: LimiterName): number | null {
  const config = c.get('config');
  const limit = config[limiters[name]];
  return !config['ratelimit.enabled'] || limit === 0 ? null : limit;
}

/** The Durable Object's verdict, or the isolate's own when the object cannot be reached. */
export async function hitOrFallBack(name: LimiterName, key: string, limit: number, hitRemote: () => Promise<WindowVerdict>, count = 1): Promise<WindowVerdict> {
  try {
    return await hitRemote();
  } catch (e) {
    logUnreachable(name, e);
    return count === 1 ? fallbackWindows.hit(key, limit, WINDOW_MS) : fallbackWindows.take(key, limit, WINDOW_MS, count);
  }
}

/** Throws the 429 for a refused verdict. */
export function enforceLimit(verdict: WindowVerdict | null): void {
  if (!verdict || verdict.allowed) return;
  const retryAfter = Math.max(1, Math.ceil((verdict.resetAt - Date.now()) / 1000));
  throw new ApiError(429, `rate limit exceeded: ${verdict.limit} requests per minute`, undefined, {
    ...headers(verdict), 'Retry-After': String(retryAfter),
  });
}

/** Puts the RateLimit-* headers of the request's verdict on whatever response it gets. */
export const rateLimitHeaders = () =>
  createMiddleware<AppEnv>(async (c, next) => {
    await next();
    const verdict = c.get('rateLimit');
    if (verdict) for (const [k, v] of Object.entries(headers(verdict))) c.res.headers.set(k, v);
  });

/**
 * A limiter in front of a route: a refusal goes no further.
 * @example app.post('/webhooks/ses', rateLimitHeaders(), rateLimit('ses_webhook', addressBucketOf))
 */
export const rateLimit = (name: LimiterName, bucketOf: BucketOf) =>
  createMiddleware<AppEnv>(async (c, next) => {
    enforceLimit(await checkLimit(c, name, bucketOf(c)));
    await next();
  });
