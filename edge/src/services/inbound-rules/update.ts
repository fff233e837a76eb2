import { sql } from 'drizzle-orm';
import { inboundRules } from '@edgemail/schema';
import type { RuleAction } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import type { UpdateInboundRuleInput } from '../../contracts/inbound-rule.js';
import { checkActionParams } from './params.js';
import { findInboundRule, ruleNotFound } from './find.js';
import { lockProjectRules } from './lock.js';
import { presentInboundRule } from './present.js';

/**
 * Changes a rule; a new `position` moves it there (past the end: last) and
 * shifts the rules between by one. Parameters of the previous action that the
 * new one does not take are cleared.
 */
export async function updateInboundRule(db: Db, projectId: string, id: string, input: UpdateInboundRuleInput) {
  const current = await findInboundRule(db, projectId, id);
  const action = (input.action ?? current.action) as RuleAction;
  const given = {
    ...(input.refuse_text !== undefined ? { refuseText: input.refuse_text } : {}),
    ...(input.webhook_ids !== undefined ? { webhookIds: input.webhook_ids } : {}),
    ...(input.forward_to !== undefined ? { forwardTo: input.forward_to } : {}),
  };
  const params = await checkActionParams(db, projectId, action, given, current);
  const to = input.position ?? null;
  const statements = [
    lockProjectRules(db, projectId),
    // Moves the rule (clamped to the last place) and shifts those between.
    db.execute(sql`
      with me as (select position as old, least(coalesce(${to}::int, position),
          (select count(*)::int from ${inboundRules} where project_id = ${projectId})) as new
        from ${inboundRules} where id = ${id} and project_id = ${projectId})
      update ${inboundRules} r set position = case
          when r.id = ${id} then me.new
          when me.new < me.old and r.position >= me.new and r.position < me.old then r.position + 1
          when me.new > me.old and r.position <= me.new and r.position > me.old then r.position - 1
          else r.position end
      from me where r.project_id = ${projectId} and me.new <> me.old`),
    db.update(inboundRules).set({
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.match !== undefined ? { match: input.match } : {}),
      action, refuseText: params.refuseText, webhookIds: params.webhookIds, forwardTo: params.forwardTo,
      updatedAt: sql`now()`,
    }).where(sql`${inboundRules.id} = ${id} and ${inboundRules.projectId} = ${projectId}`).returning(),
  ] as const;
  const [, , rows] = await db.batch(statements);
  const row = rows[0];
  if (!row) throw ruleNotFound(); // deleted meanwhile
  return { inbound_rule: presentInboundRule(row) };
}
