// The refusals a relay node makes from the routing rules the edge gave it
// with the domain list (docs/inbound-rules.md): at RCPT from the recipient and
// the envelope sender, at the end of DATA from the header block and the
// verdicts too. The matching is the shared engine's (shared/src/inbound-rules),
// the same the edge runs at ingest; what the node cannot decide it accepts,
// and the edge decides.
import { compileRule, firstMatch, type CompiledRule, type DomainsAnswer, type MessageFacts, type RuleMatch } from '@edgemail/shared';

type NodeRule = { match: RuleMatch; refuse: string | null };

export interface NodeRules {
  /** Whether any of these recipient domains has rules the node holds: without, nothing is refused at DATA and the header block need not be read. */
  judges(domains: string[]): boolean;
  /** The refusal text for this recipient at RCPT, or null (accept, or not decidable yet). */
  atRcpt(recipient: string, domain: string, sender: string): string | null;
  /**
   * The refusal text for the whole message at DATA, or null. Refused only when
   * every recipient's project decides `refuse`: one project that takes the
   * message means it is accepted (the edge then stores it as `rejected` for
   * the projects whose rule refused it).
   */
  atData(recipients: { address: string; domain: string }[], facts: Omit<MessageFacts, 'recipients'>): string | null;
}

/** Compiles the answer's rules once per list version. */
export function createNodeRules(answer: () => DomainsAnswer | null): NodeRules {
  let compiledFor: DomainsAnswer | null = null;
  let byDomain = new Map<string, CompiledRule<NodeRule>[]>();
  const rulesOf = (domain: string) => {
    const current = answer();
    if (current !== compiledFor) {
      compiledFor = current;
      byDomain = new Map();
      for (const group of current?.inbound_rules ?? []) {
        const compiled = group.rules.map((r) => compileRule({ match: r.match as RuleMatch, refuse: r.refuse }));
        for (const d of group.domains) byDomain.set(d.toLowerCase(), compiled);
      }
    }
    return byDomain.get(domain);
  };
  const refusal = (rules: CompiledRule<NodeRule>[] | undefined, facts: MessageFacts): string | null => {
    if (!rules) return null;
    const found = firstMatch(rules, facts);
    return found.decided && found.rule?.refuse != null ? found.rule.refuse : null;
  };
  return {
    judges(domains) {
      return domains.some((d) => rulesOf(d) !== undefined);
    },
    atRcpt(recipient, domain, sender) {
      return refusal(rulesOf(domain), { recipients: [recipient], sender });
    },
    atData(recipients, facts) {
      if (!recipients.length) return null;
      // One project's recipients are judged together, as the edge judges them.
      const groups = new Map<CompiledRule<NodeRule>[] | undefined, string[]>();
      for (const r of recipients) {
        const rules = rulesOf(r.domain);
        groups.set(rules, [...(groups.get(rules) ?? []), r.address]);
      }
      let text: string | null = null;
      for (const [rules, addresses] of groups) {
        const t = refusal(rules, { ...facts, recipients: addresses });
        if (t === null) return null;
        text ??= t;
      }
      return text;
    },
  };
}

/** The header block of a message as the node sees it at DATA (shared with the edge's rule test route). */
export { parseHeaderBlock } from '@edgemail/shared';
