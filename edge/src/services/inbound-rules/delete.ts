import { sql } from 'drizzle-orm';
import { inboundRules } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { ruleNotFound } from './find.js';
import { lockProjectRules } from './lock.js';

/** Deletes a rule and closes its gap: the rules after it move up one. */
export async function deleteInboundRule(db: Db, projectId: string, id: string): Promise<void> {
  const [, result] = await db.batch([
    lockProjectRules(db, projectId),
    db.execute<{ n: number }>(sql`
      with d as (delete from ${inboundRules} where id = ${id} and project_id = ${projectId} returning position),
      moved as (update ${inboundRules} r set position = r.position - 1 from d
        where r.project_id = ${projectId} and r.position > d.position returning 1)
      select (select count(*)::int from d) as n, (select count(*) from moved) as moved`),
  ]);
  if (!Number(result.rows[0]?.n)) throw ruleNotFound();
}
