import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { AcmeChallengeRemovedSchema, AcmeTokenParam } from '../../../contracts/relay-acme.js';
import { assertAcmeNode } from '../../../services/certificates/acme-leases.js';
import { removeChallenge } from '../../../services/certificates/acme-challenges.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'delete',
  path: '/relay/v1/acme/challenges/{token}',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Remove an http-01 answer',
  description: 'The ordering node removes its challenge once the CA has validated (or the order failed). `removed: false` when there was none of a host this node holds the lease of (already removed, expired, or another node\'s): nothing changes.',
  tags: ['Relay'],
  errors: [403],
  request: { params: AcmeTokenParam },
  responses: {
    200: { description: 'Whether a challenge was removed', content: { 'application/json': { schema: AcmeChallengeRemovedSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const node = c.get('relayNode');
  assertAcmeNode(node);
  const { token } = c.req.valid('param');
  return c.json({ token, removed: await removeChallenge(c.get('db'), node.id, token) }, 200);
};
