// The domain list a relay node answers RCPT from, and a cheap version a
// heartbeat can carry: its own project's domains, or every project's for an
// installation-wide node.
import { asc, eq, sql } from 'drizzle-orm';
import { domains } from '@edgemail/schema';
import type { Db } from '../../db/client.js';

/** The domains a node may serve: the one rule for the list, its version and ingest. */
export interface NodeScope { projectId: string; installationWide: boolean }
export const servedBy = (node: NodeScope) => (node.installationWide ? undefined : eq(domains.projectId, node.projectId));

/**
 * Changes whenever a domain is added or removed: the count, the newest
 * creation time and a sum of the names' hashes (so a removal and an addition
 * between two looks cannot cancel out), hashed into an opaque string. One
 * pass over a small table.
 */
export const domainsVersionQuery = (db: Db, node: NodeScope) => db
  .select({
    version: sql<string>`md5(count(*)::text || '.' || coalesce((extract(epoch from max(${domains.createdAt})) * 1000000)::bigint::text, '')
      || '.' || coalesce(sum(hashtextextended(${domains.name}, 0)::numeric), 0)::text)`,
  })
  .from(domains)
  .where(servedBy(node));

export async function listRegisteredDomains(db: Db, node: NodeScope) {
  const [rows, version] = await db.batch([
    db.select({ name: domains.name }).from(domains).where(servedBy(node)).orderBy(asc(domains.name)),
    domainsVersionQuery(db, node),
  ]);
  return { domains: rows.map((r) => r.name), version: version[0]!.version };
}
