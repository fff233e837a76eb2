import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { DomainsAnswerSchema } from '../../../contracts/relay.js';
import { listRegisteredDomains } from '../../../services/relay-nodes/domains.js';
import { withBounceDomain } from '../../../services/delivery/bounces/domain-list.js';
import { nodeInboundRules } from '../../../services/inbound-rules/node-rules.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'get',
  path: '/relay/v1/domains',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'The domains a node accepts mail for',
  description: 'The domains whose ownership is proven (docs/inbound.md, "Domain ownership"), of the node\'s project or, for an installation-wide node, of every project; lower case, sorted: a node accepts RCPT for exactly these. `full` lists those whose project has reached `inbound.storage_quota_bytes`: RCPT for them is `452 4.2.2`. `inbound_rules`: per project with a `refuse` routing rule, its domains and its rules up to the last refusal, which the node answers 550 from at RCPT or DATA (docs/inbound-rules.md). `version` changes whenever any of these changes. An installation-wide node also gets the bounce domain `bounces.<host of server.public_url>` (docs/bounces.md), so it accepts DSNs and complaints at VERP return paths.',
  tags: ['Relay'],
  responses: {
    200: {
      description: 'The domain list',
      content: { 'application/json': { schema: DomainsAnswerSchema } },
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const list = await listRegisteredDomains(c.get('db'), c.get('relayNode'));
  const inboundRules = await nodeInboundRules(c.get('db'), c.get('relayNode'));
  return c.json({ ...withBounceDomain(list, c.get('config'), c.get('relayNode')), inbound_rules: inboundRules }, 200);
};
