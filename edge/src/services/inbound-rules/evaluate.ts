// The rules of the projects a message reaches, compiled once per ingest, and
// the decision for one project: the shared engine (shared/src/inbound-rules)
// is the only matcher; this file only loads rows and builds the facts.
import { asc, inArray } from 'drizzle-orm';
import { inboundRules } from '@edgemail/schema';
import { compileRule, firstMatch, type CompiledRule, type MessageFacts, type RuleAction, type RuleMatch } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import type { InboundRuleRow } from './present.js';

/** A stored rule with its conditions typed. */
export type RuleRow = Omit<InboundRuleRow, 'match'> & { match: RuleMatch };
/** What ingest needs of a rule to act on it (rules-cache.ts reads only these). */
export type IngestRule = Pick<RuleRow, 'id' | 'action' | 'match' | 'refuseText' | 'webhookIds' | 'forwardTo'>;
export type CompiledRules<R extends IngestRule = RuleRow> = Map<string, CompiledRule<R>[]>;

/** One query for every project's rules, in order. No rules: an empty map (every message is stored). */
export async function loadRules(db: Db, projectIds: string[]): Promise<CompiledRules> {
  const out: CompiledRules = new Map();
  if (!projectIds.length) return out;
  const rows = await db.select().from(inboundRules).where(inArray(inboundRules.projectId, projectIds)).orderBy(asc(inboundRules.projectId), asc(inboundRules.position));
  for (const row of rows) {
    const list = out.get(row.projectId) ?? [];
    list.push(compileRule({ ...row, match: row.match as RuleMatch }));
    out.set(row.projectId, list);
  }
  return out;
}

export interface RuleDecision<R extends IngestRule = IngestRule> { rule: R | null; action: RuleAction }

/** The first matching rule of the project, `store` when none does. Every fact is known at the edge. */
export function decide<R extends IngestRule>(rules: CompiledRules<R>, projectId: string, facts: MessageFacts): RuleDecision<R> {
  const list = rules.get(projectId);
  if (!list?.length) return { rule: null, action: 'store' };
  const found = firstMatch(list, facts);
  const rule = found.decided ? found.rule : null;
  return { rule, action: (rule?.action ?? 'store') as RuleAction };
}

/** The facts of a forwarded message for one project's recipients. */
export function factsOf(input: {
  recipients: string[]; sender: string; subject: string; headers: Record<string, string | string[]>;
  auth: { spf: string; dkim: string; dmarc: string; aligned: boolean } | null; spam: { action: string } | null;
}): MessageFacts {
  return {
    recipients: input.recipients, sender: input.sender, subject: input.subject, headers: input.headers,
    auth: input.auth ?? { spf: 'none', dkim: 'none', dmarc: 'none', aligned: false }, spam: input.spam,
  };
}
