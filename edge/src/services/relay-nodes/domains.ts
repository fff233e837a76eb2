// The domain list a relay node answers RCPT from, and a cheap version a
// heartbeat can carry: its own project's domains, or every project's for an
// installation-wide node; only names whose ownership is proven
// (docs/inbound.md, "Domain ownership"), with those of projects whose inbound
// storage quota is reached marked `full`, and each project's spam reject threshold.
import { and, eq, isNotNull, sql } from 'drizzle-orm';
import { domains, inboundUsage, projects } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { rulesVersionSql } from '../inbound-rules/version.js';

/** The domains a node may serve: the one rule for the list, its version and ingest. */
export interface NodeScope { projectId: string; installationWide: boolean }
export const servedBy = (node: NodeScope) => and(
  isNotNull(domains.ownershipProvenAt),
  node.installationWide ? undefined : eq(domains.projectId, node.projectId),
);

const full = sql<boolean>`coalesce(${inboundUsage.quotaReached}, false)`.as('full');
// The project's spam reject threshold (docs/inbound.md, Spam scoring): the node refuses at DATA from it.
const spamReject = sql<number | null>`${projects.inboundSpamRejectScore}`.as('spam_reject');
const served = (db: Db, node: NodeScope) => db.select({ name: domains.name, full, spamReject })
  .from(domains)
  .leftJoin(inboundUsage, eq(inboundUsage.projectId, domains.projectId))
  .innerJoin(projects, eq(projects.id, domains.projectId))
  .where(servedBy(node));

/**
 * Changes whenever the list or its `full` marks change: a hash of the sorted
 * names and marks, so no change can cancel another out. One pass over the
 * served names.
 */
export const domainsVersionQuery = (db: Db, node: NodeScope) => {
  const list = served(db, node).as('served');
  return db.select({
    version: sql<string>`md5(coalesce(string_agg(${list.name} || case when ${list.full} then '!' else '' end || coalesce('=' || ${list.spamReject}::text, ''), ',' order by ${list.name}), '') || ${rulesVersionSql(sql`(select ${domains.projectId} from ${domains} where ${servedBy(node)})`)})`,
  }).from(list);
};

export async function listRegisteredDomains(db: Db, node: NodeScope) {
  const [rows, version] = await db.batch([
    served(db, node).orderBy(domains.name),
    domainsVersionQuery(db, node),
  ]);
  return {
    domains: rows.map((r) => r.name),
    full: rows.filter((r) => r.full).map((r) => r.name),
    spam_reject: Object.fromEntries(rows.filter((r) => r.spamReject !== null).map((r) => [r.name, Number(r.spamReject)])),
    version: version[0]!.version,
  };
}
