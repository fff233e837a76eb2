import type { inboundRules } from '@edgemail/schema';
import type { InboundRuleRecord } from '../../contracts/inbound-rule.js';

export type InboundRuleRow = typeof inboundRules.$inferSelect;

export function presentInboundRule(row: Omit<InboundRuleRow, 'match'> & { match: unknown }): InboundRuleRecord {
  return {
    id: row.id, position: row.position, name: row.name, match: row.match as InboundRuleRecord['match'],
    action: row.action as InboundRuleRecord['action'], refuse_text: row.refuseText, webhook_ids: row.webhookIds, forward_to: row.forwardTo,
    matched_count: Number(row.matchedCount), last_matched_at: row.lastMatchedAt?.toISOString() ?? null,
    created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString(),
  };
}
