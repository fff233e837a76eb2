import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { DomainsAnswerSchema } from '../../../contracts/relay.js';
import { listRegisteredDomains } from '../../../services/relay-nodes/domains.js';
import { withBounceDomain } from '../../../services/delivery/bounces/domain-list.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'get',
  path: '/relay/v1/domains',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'The domains a node accepts mail for',
  description: 'The domains whose ownership is proven (docs/inbound.md, "Domain ownership"), of the node\'s project or, for an installation-wide node, of every project; lower case, sorted: a node accepts RCPT for exactly these. `full` lists those whose project has reached `inbound.storage_quota_bytes`: RCPT for them is `452 4.2.2`. `version` changes whenever either list changes. An installation-wide node also gets the bounce domain `bounces.<host of server.public_url>` (docs/bounces.md), so it accepts DSNs and complaints at VERP return paths.',
  tags: ['Relay'],
  responses: {
    200: {
      description: 'The domain list',
      content: { 'application/json': { schema: DomainsAnswerSchema } },
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json(withBounceDomain(await listRegisteredDomains(c.get('db'), c.get('relayNode')), c.get('config'), c.get('relayNode')), 200);
