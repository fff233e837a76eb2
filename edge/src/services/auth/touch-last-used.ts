// Last use of a credential, recorded at most once a minute per credential and
// never on the request's critical path (the caller hands it to waitUntil).
import { and, eq, isNull, lt, or, sql } from 'drizzle-orm';
import { apiKeys, platformCredentials } from '@edgemail/schema';
import { LruCache } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { loggableError } from '../../db/errors.js';

const INTERVAL_MS = 60_000;
// Per isolate: requests arriving in the same minute skip the write entirely.
// Across isolates the SQL guard below keeps it to one write a minute.
const recentlyTouched = new LruCache<string, number>(10_000);

/** Returns the write to run after the response, or null when none is due. */
export function lastUsedUpdate(db: Db, kind: 'key' | 'platform', id: string, lastUsedAt: Date | null, now = Date.now()): Promise<unknown> | null {
  if (lastUsedAt && now - lastUsedAt.getTime() < INTERVAL_MS) return null;
  const seen = recentlyTouched.get(id);
  if (seen && now - seen < INTERVAL_MS) return null;
  recentlyTouched.set(id, now);
  const table = kind === 'key' ? apiKeys : platformCredentials;
  const due = or(isNull(table.lastUsedAt), lt(table.lastUsedAt, sql`now() - interval '1 minute'`));
  return db.update(table).set({ lastUsedAt: sql`now()` }).where(and(eq(table.id, id), due)).then(
    () => undefined,
    (e: unknown) => console.error('last-used update failed', loggableError(e)),
  );
}
