// The rule test route: which rule a stored message, a message described by its
// facts, or a raw message with its envelope would meet and what would happen. Reads only: nothing is stored,
// counted, sent or delivered.
import type { Db } from '../../db/client.js';
import { invalid } from '../errors.js';
import type { TestInboundRulesInput } from '../../contracts/inbound-rule.js';
import { getInboundEmail } from '../inbound-emails/get.js';
import { decide, factsOf, loadRules } from './evaluate.js';
import { presentInboundRule } from './present.js';
import { FORWARD_MAX_HOPS } from './forward-limits.js';
import { readRawHeader } from './raw-header.js';
import type { RuleRow } from './evaluate.js';

function would(action: string, rule: RuleRow | null): string {
  switch (action) {
    case 'webhooks': return `store the message and deliver inbound.received only to webhooks ${rule!.webhookIds!.join(', ')}`;
    case 'forward': return `store the message and send a copy to ${rule!.forwardTo} (From the address it was received at, Reply-To the original sender, SRS envelope sender; not when it has been forwarded ${FORWARD_MAX_HOPS} times)`;
    case 'refuse': return `refuse it at SMTP time: 550 5.7.1 ${rule!.refuseText}`;
    case 'drop': return 'accept it and store nothing (counted in the rule\'s matched_count)';
    default: return rule ? 'store the message and deliver inbound.received to every subscribed webhook' : 'store the message (no rule matched) and deliver inbound.received to every subscribed webhook';
  }
}

export async function testInboundRules(db: Db, projectId: string, input: TestInboundRulesInput) {
  if (!input.inbound_email_id === !input.message) {
    throw invalid('invalid request body: give exactly one of inbound_email_id and message', { inbound_email_id: 'exactly one of inbound_email_id and message' });
  }
  let facts;
  if (input.inbound_email_id) {
    const r = await getInboundEmail(db, projectId, input.inbound_email_id);
    const spam = (r as { spam?: { action: string } | null }).spam ?? null;
    facts = factsOf({ recipients: r.recipients, sender: r.sender, subject: r.subject, headers: r.headers, auth: r.auth, spam });
  } else {
    const m = input.message!;
    if (m.raw !== undefined && (m.subject !== undefined || m.headers !== undefined)) {
      throw invalid('invalid request body: give message.raw or message.subject and message.headers, not both', { 'message.raw': 'give raw or subject and headers, not both' });
    }
    const { subject, headers } = m.raw === undefined
      ? { subject: m.subject ?? '', headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])) }
      : readRawHeader(m.raw);
    facts = factsOf({ recipients: m.recipients, sender: m.sender ?? '', subject, headers, auth: m.auth ?? null, spam: m.spam ?? null });
  }
  const { rule, action } = decide(await loadRules(db, [projectId]), projectId, facts);
  return { rule: rule ? presentInboundRule(rule) : null, action: action as ReturnType<typeof presentInboundRule>['action'], would: would(action, rule) };
}
