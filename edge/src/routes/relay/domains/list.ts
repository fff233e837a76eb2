import { z, type RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { listRegisteredDomains } from '../../../services/relay-domains/list.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'get',
  path: '/relay/v1/domains',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Every registered domain',
  description: 'All projects\' domains, lower case, sorted: a node accepts RCPT for exactly these. `version` changes whenever one is added or removed.',
  tags: ['Relay'],
  responses: {
    200: {
      description: 'The domain list',
      content: { 'application/json': { schema: z.object({ domains: z.array(z.string()).openapi({ example: ['acme.test'] }), version: z.string() }) } },
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json(await listRegisteredDomains(c.get('db'), c.get('relayNode')), 200);
