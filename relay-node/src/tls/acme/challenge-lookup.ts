// How the http-01 responder asks the edge for a token it does not hold (the
// CA reached this node, another one is ordering). Anyone on the Internet can
// send such requests with made-up tokens, and the edge's lookups count in the
// chatter limit this node's heartbeats share, so the edge is asked
//  - only for tokens of the base64url alphabet and 22 to 128 characters
//    (RFC 8555 asks for at least 128 bits of entropy),
//  - once per token at a time (the CA validates from several places at once),
//  - at most `perClientPerMinute` times a minute for one client address
//    (`acme.edge_lookups_per_client_per_minute`; IPv6 by /64), so that one
//    client spraying made-up tokens cannot use up the node's whole allowance
//    and leave the CA's validation of another node's order unanswered,
//  - at most `perMinute` times a minute in all (20 by default: a few orders'
//    worth), whatever the clients,
// and the answers are kept: a found one until it expires, a miss for
// `missTtlMs` (30 s), in a bounded LRU. A kept answer or a lookup already
// under way costs no budget. Beyond either rate a token is answered "unknown"
// without asking; the CA retries or the order fails and is retried.
import { addressBucket, FixedWindow, FixedWindows, LruCache } from '@edgemail/shared';
import type { Log } from '../../log.js';

export const HTTP01_TOKEN = /^[A-Za-z0-9_-]{22,128}$/;

export interface ChallengeLookupOptions {
  /** The edge's answer: the key authorization, null when it knows no such token. */
  fetch(token: string): Promise<{ key_authorization: string; expires_at: string } | null>;
  log: Log;
  perMinute?: number;
  /** Lookups one client address (its addressBucket) may cause a minute; unset: no budget per client, the global one alone. */
  perClientPerMinute?: number;
  /** Client addresses remembered for their budgets (least recently seen forgotten). */
  clientCapacity?: number;
  missTtlMs?: number;
  /** Tokens remembered (found or missed). */
  capacity?: number;
  now?: () => number;
}

/** `client`: the requesting address, whose budget a lookup at the edge spends. */
export type ChallengeLookup = (token: string, client?: string) => Promise<string | null>;

export function createChallengeLookup(options: ChallengeLookupOptions): ChallengeLookup {
  const perMinute = options.perMinute ?? 20;
  const missTtlMs = options.missTtlMs ?? 30_000;
  const now = options.now ?? Date.now;
  const known = new LruCache<string, { value: string | null; until: number }>(options.capacity ?? 1024);
  const inFlight = new Map<string, Promise<string | null>>();
  const window = new FixedWindow();
  const perClient = options.perClientPerMinute;
  const clients = new FixedWindows(options.clientCapacity ?? 10_000);
  let limitedSince: number | null = null;
  let clientLimitedSince: number | null = null;

  return async (token, client) => {
    if (!HTTP01_TOKEN.test(token)) return null;
    const cached = known.get(token);
    if (cached && cached.until > now()) return cached.value;
    const pending = inFlight.get(token);
    if (pending) return pending;
    // The client's own budget first: a refused client must not spend the shared one.
    if (perClient !== undefined && client !== undefined && !clients.hit(addressBucket(client), perClient, 60_000, now()).allowed) {
      if (clientLimitedSince === null || now() - clientLimitedSince > 60_000) {
        clientLimitedSince = now();
        options.log.warn('acme challenge lookups at the edge: a client over its budget is answered 404 without asking', { client, per_client_per_minute: perClient });
      }
      return null;
    }
    if (!window.hit(perMinute, 60_000, now()).allowed) {
      // One line per minute of flooding, not one per request.
      if (limitedSince === null || now() - limitedSince > 60_000) {
        limitedSince = now();
        options.log.warn('acme challenge lookups at the edge rate-limited: unknown tokens answered 404 without asking', { per_minute: perMinute });
      }
      return null;
    }
    const asked = options.fetch(token).then((found) => {
      const value = found?.key_authorization ?? null;
      known.set(token, { value, until: found ? Date.parse(found.expires_at) : now() + missTtlMs });
      return value;
    }).finally(() => inFlight.delete(token));
    inFlight.set(token, asked);
    return asked;
  };
}
