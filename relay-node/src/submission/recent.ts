// The Message-IDs this node answered 250 for from a lease, for 24 hours
// (docs/submission.md, "Sent twice?"): the same Message-ID and envelope again
// with the same content is the same message (the same id, which the edge
// knows: nothing sent twice); with other content it is refused `554 5.6.0` at
// once, as the edge refuses it. In memory, bounded: a node restarted, or
// another node, does not know it, and the edge then records the second
// message as the first (its id is derived from the project, the envelope and
// the Message-ID).
import { createHash } from 'node:crypto';
import { LruCache, type SubmissionMessage } from '@edgemail/shared';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface Recent { id: string; content: string; at: number }

export interface RecentSubmissions {
  /** What was answered for this key within 24 hours, or null. */
  get(key: string, now?: number): Recent | null;
  remember(key: string, id: string, message: SubmissionMessage, now?: number): void;
}

/** The key of a message with a Message-ID: its project, sandbox flag, envelope (recipients sorted) and Message-ID. */
export function recentKey(projectId: string, sandbox: boolean, mailFrom: string, rcptTo: string[], messageId: string): string {
  return createHash('sha256').update(JSON.stringify([projectId, sandbox, mailFrom, [...rcptTo].sort(), messageId])).digest('hex');
}

/** The fields' digest: what "the same content" compares (the client's Date aside, as the edge compares it). */
export const contentDigest = (message: SubmissionMessage): string => createHash('sha256').update(JSON.stringify(message)).digest('base64');

/** A message id (a UUID, version 8: derived) from a `recentKey`: the same message named the same wherever it is answered. */
export function idOfKey(key: string): string {
  const h = key.slice(0, 32).split('');
  h[12] = '8';
  h[16] = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  const x = h.join('');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export function createRecentSubmissions(capacity = 100_000): RecentSubmissions {
  const seen = new LruCache<string, Recent>(capacity);
  return {
    get(key, now = Date.now()) {
      const r = seen.get(key);
      return r && now - r.at < DAY_MS ? r : null;
    },
    remember(key, id, message, now = Date.now()) {
      seen.set(key, { id, content: contentDigest(message), at: now });
    },
  };
}
