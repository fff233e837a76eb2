// HTTP request rate limits: fixed one-minute windows kept in the RateLimiter
// Durable Object, one Durable Object call per request. Every limited response
// carries RateLimit-* headers; a refusal is 429 with Retry-After.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import type { Config } from '@edgemail/shared';
import { parseToken } from '@edgemail/shared';
import { ApiError } from '../http/errors.js';
import { bearerToken } from './bearer.js';
import type { WindowVerdict } from '../durable-objects/rate-limiter.js';
import type { AppEnv } from '../env.js';

const WINDOW_MS = 60_000;

/** The limiters of the spec's table: the setting holding each one's per-minute limit. */
export const limiters = {
  api: 'ratelimit.api_per_minute',
  login: 'ratelimit.login_per_minute',
  oidc: 'ratelimit.oidc_per_minute',
  ses_webhook: 'ratelimit.ses_webhook_per_minute',
  relay_node_chatter: 'ratelimit.relay_node_chatter_per_minute',
  relay_node_inbound: 'ratelimit.relay_node_inbound_per_minute',
} as const satisfies Record<string, keyof Config>;
export type LimiterName = keyof typeof limiters;

/** What a request is counted by: the client address unless `key` names something better. */
export type BucketOf = (c: Context<AppEnv>) => string;

export const byClientAddress: BucketOf = (c) => `ip:${c.get('clientIp')}`;

/**
 * `/api/v1`: per API key, falling back to the client address. The key is told
 * by its token's public prefix, so no database read is needed first.
 */
export const byApiKeyOrAddress: BucketOf = (c) => {
  const token = bearerToken(c.req.header('authorization'));
  const parsed = token ? parseToken(token) : null;
  return parsed ? `key:${parsed.keyPrefix}` : byClientAddress(c);
};

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
const ids = new Map<string, DurableObjectId>();

function limiterStub(namespace: LimiterNamespace, bucket: string) {
  let id = ids.get(bucket);
  if (!id) {
    if (ids.size >= 10_000) ids.clear();
    id = namespace.idFromName(bucket);
    ids.set(bucket, id);
  }
  return namespace.get(id);
}

/**
 * Counts the request against a limiter: one Durable Object call. Null when the
 * limiter is off, or unreachable (fail open: an unreachable limiter must not
 * take the API down with it). Never rejects.
 */
export async function checkLimit(c: Context<AppEnv>, name: LimiterName, bucketOf: BucketOf): Promise<WindowVerdict | null> {
  const config = c.get('config');
  const limit = config[limiters[name]];
  if (!config['ratelimit.enabled'] || limit === 0) return null;
  try {
    const verdict = await limiterStub(c.env.RATE_LIMITER, `${name}|${bucketOf(c)}`).hit(limit, WINDOW_MS);
    c.set('rateLimit', verdict);
    return verdict;
  } catch (e) {
    console.error(`rate limiter ${name} unavailable; request let through`, e);
    return null;
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
 * @example app.post('/webhooks/ses', rateLimitHeaders(), rateLimit('ses_webhook', byClientAddress))
 */
export const rateLimit = (name: LimiterName, bucketOf: BucketOf) =>
  createMiddleware<AppEnv>(async (c, next) => {
    enforceLimit(await checkLimit(c, name, bucketOf));
    await next();
  });
