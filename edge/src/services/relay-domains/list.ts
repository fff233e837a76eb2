// The domain list every relay node answers RCPT from: all registered domains,
// whichever project owns them, and a cheap version a heartbeat can carry.
import { asc, sql } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

/**
 * Changes whenever a domain is added or removed: the count, the newest
 * creation time and a sum of the names' hashes (so a removal and an addition
 * between two looks cannot cancel out), hashed into an opaque string. One
 * pass over a small table.
 */
export const domainsVersionQuery = (db: Db) => db
  .select({
    version: sql<string>`md5(count(*)::text || '.' || coalesce((extract(epoch from max(${domains.createdAt})) * 1000000)::bigint::text, '')
      || '.' || coalesce(sum(hashtextextended(${domains.name}, 0)::numeric), 0)::text)`,
  })
  .from(domains);

export async function listRegisteredDomains(db: Db) {
  const [rows, version] = await db.batch([
    db.select({ name: domains.name }).from(domains).orderBy(asc(domains.name)),
    domainsVersionQuery(db),
  ]);
  return { domains: rows.map((r) => r.name), version: version[0]!.version };
}
