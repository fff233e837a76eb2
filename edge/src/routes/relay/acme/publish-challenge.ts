import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { AcmeChallengeAnswerSchema, AcmeChallengeSchema } from '../../../contracts/relay-acme.js';
import { assertAcmeHost, assertAcmeNode } from '../../../services/certificates/acme-leases.js';
import { publishChallenge } from '../../../services/certificates/acme-challenges.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'put',
  path: '/relay/v1/acme/challenges',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Publish an http-01 answer',
  description: 'The ordering node publishes `{token, key_authorization, host}` before the CA validates, so that any installation-wide node can answer `GET /.well-known/acme-challenge/<token>`. Kept for 10 minutes at most; the same token again replaces it. Only the node holding the host\'s live lease publishes (409 otherwise); 403 as for the lease.',
  tags: ['Relay'],
  errors: [403, 409],
  request: { body: { required: true, content: { 'application/json': { schema: AcmeChallengeSchema } } } },
  responses: {
    200: { description: 'Published', content: { 'application/json': { schema: AcmeChallengeAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const node = c.get('relayNode');
  assertAcmeNode(node);
  const challenge = c.req.valid('json');
  assertAcmeHost(c.get('config'), challenge.host);
  return c.json(await publishChallenge(c.get('db'), node.id, challenge), 200);
};
