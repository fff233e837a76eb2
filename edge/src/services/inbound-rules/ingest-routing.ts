// What ingest asks of the routing rules (docs/inbound-rules.md): for each
// project a message reaches, the rule that decides it. Ingest then leaves out
// a dropped project (counted here), stores a refused one as `rejected` (a
// node that could not decide it at SMTP time accepted it), and hands the
// event of a `webhooks` rule to its chosen endpoints only.
import { sql } from 'drizzle-orm';
import { inboundRules } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import type { InboundMeta } from '../../contracts/inbound-meta.js';
import { decide, factsOf, type CompiledRules, type IngestRule, type RuleDecision } from './evaluate.js';

/** The spam verdict when the node sent one (rspamd, issue 32); older metas have none. */
const spamOf = (meta: InboundMeta) => (meta as { spam?: { action: string } | null }).spam ?? null;

/** The decision for each project (by id), from the rules read with the shares (rules-cache.ts). */
export function routeWith(rules: CompiledRules<IngestRule>, meta: InboundMeta, shares: { projectId: string; recipients: string[] }[]): Map<string, RuleDecision> {
  const out = new Map<string, RuleDecision>();
  const headers = { ...meta.parsed.headers, ...meta.parsed.repeated_headers };
  for (const s of shares) {
    out.set(s.projectId, rules.size ? decide(rules, s.projectId, factsOf({
      recipients: s.recipients, sender: meta.mail_from, subject: meta.parsed.subject, headers, auth: meta.auth, spam: spamOf(meta),
    })) : { rule: null, action: 'store' });
  }
  return out;
}

/** The status a rule gives a stored message: a refusal the node did not make keeps the record, `rejected`. */
export function ruledStatus<S extends { status: string; reason: string | null }>(decision: RuleDecision | undefined, status: S): S | { status: 'rejected'; reason: string } {
  if (decision?.action !== 'refuse' || !decision.rule) return status;
  return { status: 'rejected', reason: `refused by inbound rule ${decision.rule.id}: ${decision.rule.refuseText ?? ''}`.trim() };
}

/** The endpoints an `inbound.received` event goes to: a `webhooks` rule's, else null (every subscribed one). */
export const eventWebhooks = (decision: RuleDecision | undefined): string | null =>
  decision?.action === 'webhooks' && decision.rule?.webhookIds ? `{${decision.rule.webhookIds.join(',')}}` : null;

/** Counts rules that decided messages, and when; null when no rule did. */
export function countMatches(db: Db, ruleIds: string[]) {
  if (!ruleIds.length) return null;
  return db.execute(sql`update ${inboundRules} set matched_count = matched_count + 1, last_matched_at = now()
    where id = any(${`{${ruleIds.join(',')}}`}::uuid[])`);
}
