// What a relay node learns of the routing rules, with its domain list
// (`GET /relay/v1/domains`, field `inbound_rules`): for each served project
// with a `refuse` rule, its domains and its rules in order up to the last
// refusal (a rule after it can never make the node refuse). The node decides
// at RCPT or DATA with the shared engine; whatever it cannot decide, the edge
// decides at ingest from the same rules.
import { sql } from 'drizzle-orm';
import { domains, inboundRules } from '@edgemail/schema';
import type { DomainsAnswer } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { servedBy, type NodeScope } from '../relay-nodes/domains.js';

/** The projects a node serves, as a subquery of project ids (also the version's, relay-nodes/domains.ts). */
export const servedProjects = (node: NodeScope) => sql`(select ${domains.projectId} from ${domains} where ${servedBy(node)})`;

export async function nodeInboundRules(db: Db, node: NodeScope): Promise<NonNullable<DomainsAnswer['inbound_rules']>> {
  const { rows } = await db.execute<{ project_id: string; match: Record<string, unknown>; action: string; refuse_text: string | null; names: string[] }>(sql`
    select r.project_id, r.match, r.action, r.refuse_text,
      array(select d.name from ${domains} d where d.project_id = r.project_id and d.ownership_proven_at is not null order by d.name) as names
    from ${inboundRules} r
    where r.project_id in ${servedProjects(node)}
      and r.position <= (select max(x.position) from ${inboundRules} x where x.project_id = r.project_id and x.action = 'refuse')
    order by r.project_id, r.position`);
  const byProject = new Map<string, NonNullable<DomainsAnswer['inbound_rules']>[number]>();
  for (const r of rows) {
    const group = byProject.get(r.project_id) ?? { domains: r.names, rules: [] };
    group.rules.push({ match: r.match, refuse: r.action === 'refuse' ? r.refuse_text ?? '' : null });
    byProject.set(r.project_id, group);
  }
  return [...byProject.values()];
}
