import { sql, type SQL } from 'drizzle-orm';
import { inboundRules } from '@edgemail/schema';

/**
 * A piece of the relay domain list's version that changes with any routing
 * rule of the projects `projectIds` (a subquery) names: '' when there are
 * none, so a project without rules keeps the version it had.
 */
export const rulesVersionSql = (projectIds: SQL) => sql`coalesce((
  select string_agg(r.id::text || '@' || r.position::text || '@' || r.updated_at::text, ',' order by r.id)
  from ${inboundRules} r where r.project_id in ${projectIds}), '')`;
