import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { notFound } from '../../../http/errors.js';
import { AcmeChallengeAnswerSchema, AcmeTokenParam } from '../../../contracts/relay-acme.js';
import { assertAcmeNode } from '../../../services/certificates/acme-leases.js';
import { findChallenge } from '../../../services/certificates/acme-challenges.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'get',
  path: '/relay/v1/acme/challenges/{token}',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Read an http-01 answer',
  description: 'Any installation-wide node reads a published challenge by its token, to answer the CA\'s request when it reached a node other than the one ordering. 404 for an unknown or expired token; 400 for a token outside the base64url alphabet (1 to 128 characters).',
  tags: ['Relay'],
  errors: [403, 404],
  request: { params: AcmeTokenParam },
  responses: {
    200: { description: 'The challenge', content: { 'application/json': { schema: AcmeChallengeAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  assertAcmeNode(c.get('relayNode'));
  const challenge = await findChallenge(c.get('db'), c.req.valid('param').token);
  if (!challenge) throw notFound('no such ACME challenge');
  return c.json(challenge, 200);
};
