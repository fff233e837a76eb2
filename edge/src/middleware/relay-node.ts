// Who is calling on /relay/v1: a relay node by its `myr_` credential, or (to
// enrol one) a project key holding relay:write. A node is counted in its own
// bucket of the route's limiter; a token that proves nothing is counted
// against the client address instead, as on /api/v1.
import type { Context } from 'hono';
import { createMiddleware } from 'hono/factory';
import { parseToken, sha256Hex } from '@edgemail/shared';
import { forbidden, unauthorized } from '../http/errors.js';
import { findRelayNode } from '../services/relay-nodes/find.js';
import { authorize } from './authorize.js';
import { bearerToken } from './bearer.js';
import { addressBucketOf, checkLimit, enforceLimit, type LimiterName } from './rate-limit.js';
import type { AppEnv } from '../env.js';

export type RelayLimiter = Extract<LimiterName, 'relay_node_chatter' | 'relay_node_inbound'>;

/** A node's bucket in the relay limiters. */
export const nodeBucket = (nodeId: string) => `node:${nodeId}`;

async function refuse(c: Context<AppEnv>, limiter: RelayLimiter, message: string): Promise<never> {
  enforceLimit(await checkLimit(c, limiter, addressBucketOf(c)));
  throw unauthorized(message);
}

/**
 * Resolves the node credential (revocation holds from the next call on), then
 * counts the call in the node's bucket of `limiter`: as `countOf` requests
 * when given (a batch counts each of its messages; the verdict's `granted`
 * says how many of them passed).
 * @example defineRelayRoute({ …, credential: 'node', limiter: 'relay_node_chatter' })
 */
export const authenticateNode = (limiter: RelayLimiter, countOf?: (c: Context<AppEnv>) => number) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const authorization = c.req.header('authorization');
    if (authorization === undefined) throw unauthorized('relay node credential required');
    const token = bearerToken(authorization);
    if (!token) throw unauthorized('malformed Authorization header: expected "Bearer <token>"');
    const parsed = parseToken(token);
    if (parsed?.kind !== 'relay') throw unauthorized('invalid relay node credential');
    const node = await findRelayNode(c.get('db'), parsed.keyPrefix, await sha256Hex(token));
    if (!node) return refuse(c, limiter, 'invalid relay node credential');
    if (node.revoked) return refuse(c, limiter, 'relay node revoked');
    enforceLimit(await checkLimit(c, limiter, nodeBucket(node.id), countOf?.(c) ?? 1));
    c.set('relayNode', node);
    await next();
  });

/**
 * Enrolment: after the usual key authentication (`authenticate('api')`),
 * only a project key may enrol (a node belongs to the key's project), and it
 * must hold relay:write, judged as on /api/v1.
 */
export const requireEnrollingKey = () => {
  const relayWrite = authorize('relay:write');
  return createMiddleware<AppEnv>(async (c, next) => {
    if (c.get('principal').kind !== 'key') throw forbidden('relay node enrolment takes a project API key (myk_) holding relay:write');
    return relayWrite(c, next);
  });
};

/**
 * The installation's shared certificate is served to installation-wide nodes
 * only: a node a project key enrolled presents a pair of its own.
 */
export function assertInstallationWide(c: Context<AppEnv>): void {
  if (!c.get('relayNode').installationWide) throw forbidden('the shared certificate is served to installation-wide relay nodes only');
}
