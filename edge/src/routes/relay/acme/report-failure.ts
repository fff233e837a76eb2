import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { AcmeFailureAnswerSchema, AcmeFailureSchema } from '../../../contracts/relay-acme.js';
import { assertAcmeNode, reportFailure } from '../../../services/certificates/acme-leases.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/acme/leases/failure',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Report a failed ACME order',
  description: 'Stores the error (at most 2000 characters, with the CA\'s problem detail) as the host\'s `acme_leases.last_error` for operators, and holds the host for an hour: no node orders it again before `retry_after`. Only the node holding the host\'s lease reports (409 otherwise); 403 as for the lease.',
  tags: ['Relay'],
  errors: [403, 409],
  request: { body: { required: true, content: { 'application/json': { schema: AcmeFailureSchema } } } },
  responses: {
    200: { description: 'Recorded', content: { 'application/json': { schema: AcmeFailureAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const node = c.get('relayNode');
  assertAcmeNode(node);
  const { host, error } = c.req.valid('json');
  return c.json(await reportFailure(c.get('db'), c.get('config'), node.id, host, error), 200);
};
