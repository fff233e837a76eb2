// AUTH on a relay node's submission listener (docs/submission.md): the
// password is a project API key, judged exactly as the API judges it on the
// send route (revoked, expired, `allowed_ips` against the SMTP client's
// address, `emails:write`, or `sandbox:write` for a sandbox key), plus the
// node's scope: a node serving its own project only takes that project's keys.
import { ipMatcher, judge, parseToken, sha256Hex, type SubmissionAuthAnswer } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { findApiKey, type ApiKeyRow } from '../auth/find-credential.js';
import { lastUsedUpdate } from '../auth/touch-last-used.js';
import type { RelayNodeRow } from '../relay-nodes/find.js';

/** A key that may submit through this node, with the write recording its last use (null when none is due). */
export type KeyVerdict =
  | { ok: true; key: ApiKeyRow; touch: Promise<unknown> | null }
  | Extract<SubmissionAuthAnswer, { ok: false }>;

/**
 * @param clientAddress the SMTP client's address as the node saw it
 * @example const verdict = await checkSubmissionKey(db, node, token, '203.0.113.7');
 */
export async function checkSubmissionKey(db: Db, node: RelayNodeRow, token: string, clientAddress: string, now = Date.now()): Promise<KeyVerdict> {
  const parsed = parseToken(token);
  if (parsed?.kind !== 'project') return { ok: false, reason: 'invalid', message: 'the password is not a project API key' };
  const key = await findApiKey(db, parsed.keyPrefix, await sha256Hex(token));
  if (!key) return { ok: false, reason: 'invalid', message: 'invalid API key' };
  if (key.revoked) return { ok: false, reason: 'revoked', message: 'API key revoked' };
  if (key.expiresAt && key.expiresAt.getTime() <= now) return { ok: false, reason: 'expired', message: 'API key expired' };
  if (key.allowedIps.length && !ipMatcher(key.allowedIps)(clientAddress)) {
    return { ok: false, reason: 'ip_not_allowed', message: `API key not allowed from address ${clientAddress}` };
  }
  // As the send route judges it: a sandbox key on sandbox:write, any other on emails:write.
  const needed = key.sandbox ? 'sandbox:write' : 'emails:write';
  if (judge(key.permissions, needed) !== 'granted') return { ok: false, reason: 'permission', message: `permission ${needed} required` };
  if (!node.installationWide && node.projectId !== key.projectId) {
    return { ok: false, reason: 'node_scope', message: 'this relay node takes submissions for its own project only' };
  }
  return { ok: true, key, touch: lastUsedUpdate(db, 'key', key.id, key.lastUsedAt, now) };
}
