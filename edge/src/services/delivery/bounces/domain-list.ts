// The bounce domain in a relay node's domain list (`GET /relay/v1/domains`),
// so that its inbound listener accepts RCPT to VERP return paths
// (docs/bounces.md, "Receiving reports"). Installation-wide nodes only: they
// are the operator's, the ones the bounce domain's MX names.
import type { Config } from '@edgemail/shared';
import type { NodeScope } from '../../relay-nodes/domains.js';
import { bounceDomain } from './verp.js';

/**
 * `answer` with the bounce domain added (sorted in; never `full`). The list's
 * `version` is left as it is: it is the registered domains' (the heartbeat
 * compares it), and a node's periodic refresh picks up a changed bounce domain.
 */
export function withBounceDomain<A extends { domains: string[] }>(answer: A, settings: Pick<Config, 'server.public_url'>, node: NodeScope): A {
  const domain = bounceDomain(settings);
  if (!domain || !node.installationWide || answer.domains.includes(domain)) return answer;
  return { ...answer, domains: [...answer.domains, domain].sort() };
}
