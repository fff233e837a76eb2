import { sql } from 'drizzle-orm';
import { inboundRules } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { invalid } from '../errors.js';
import { INBOUND_RULES_MAX, type CreateInboundRuleInput } from '../../contracts/inbound-rule.js';
import { checkActionParams } from './params.js';
import { lockProjectRules } from './lock.js';
import { presentInboundRule, type InboundRuleRow } from './present.js';

/**
 * Adds a rule at `position` (default: last), moving the rules from there one
 * down. One transaction under the project's rules lock; at most
 * INBOUND_RULES_MAX rules per project.
 */
export async function createInboundRule(db: Db, projectId: string, input: CreateInboundRuleInput) {
  const params = await checkActionParams(db, projectId, input.action, { refuseText: input.refuse_text, webhookIds: input.webhook_ids, forwardTo: input.forward_to }, null);
  const count = sql`(select count(*)::int from ${inboundRules} where project_id = ${projectId})`;
  const position = input.position ?? 2_147_483_647;
  const [, , inserted] = await db.batch([
    lockProjectRules(db, projectId),
    db.execute(sql`update ${inboundRules} set position = position + 1
      where project_id = ${projectId} and position >= ${position} and ${count} < ${INBOUND_RULES_MAX}`),
    db.execute<Record<string, unknown>>(sql`
      insert into ${inboundRules} (project_id, position, name, match, action, refuse_text, webhook_ids, forward_to)
      select ${projectId}, least(${position}::int, ${count} + 1), ${input.name ?? ''}, ${JSON.stringify(input.match ?? {})}::jsonb, ${input.action},
        ${params.refuseText}, ${params.webhookIds ? `{${params.webhookIds.join(',')}}` : null}::uuid[], ${params.forwardTo}
      where ${count} < ${INBOUND_RULES_MAX}
      returning id`),
  ]);
  const id = inserted.rows[0]?.id as string | undefined;
  if (!id) throw invalid(`inbound rule limit reached: a project may have ${INBOUND_RULES_MAX} rules`);
  const [row] = await db.select().from(inboundRules).where(sql`${inboundRules.id} = ${id}`);
  return { inbound_rule: presentInboundRule(row as InboundRuleRow) };
}
