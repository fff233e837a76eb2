// `GET /relay/v1/domains` (docs/relay-protocol.md): the domains a node accepts mail for.
import { z } from 'zod';

export const DomainsAnswer = z.object({
  /** Every domain the node accepts mail for (ownership proven), lower case. */
  domains: z.array(z.string()),
  /** Among them, those whose project's inbound storage quota is reached. The edge always sends it; an older edge did not. */
  full: z.array(z.string()).optional(),
  /**
   * The routing rules a node refuses mail from (docs/inbound-rules.md): per
   * project that has a `refuse` rule, its served domains and its rules in
   * order up to its last refusal, each with its conditions and its refusal
   * text (null: a rule that accepts). An older edge did not send it.
   */
  inbound_rules: z.array(z.object({
    domains: z.array(z.string()),
    rules: z.array(z.object({ match: z.record(z.string(), z.unknown()), refuse: z.string().nullable() })),
  })).optional(),
  /**
   * Domain → the spam score (rspamd's) at or above which its project refuses
   * mail at DATA with 550 5.7.1; only domains whose project set one. An older edge did not send it.
   */
  spam_reject: z.record(z.string(), z.number().finite()).optional(),
  /** Changes whenever any of the lists changes. */
  version: z.string(),
});
export type DomainsAnswer = z.output<typeof DomainsAnswer>;
