import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { AcmeLeaseAnswerSchema, AcmeLeaseSchema } from '../../../contracts/relay-acme.js';
import { assertAcmeNode, requestLease } from '../../../services/certificates/acme-leases.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/acme/leases',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Ask to order a host\'s ACME certificate',
  description: 'Granted (for 10 minutes) when the stored `acme:<host>` certificate is missing or within 30 days of its end and no other node holds a live lease; one node at a time per host. A failure reported on the lease holds the host back for an hour. 403 when the edge\'s `acme.enabled` is off or the node is not installation-wide; 409 when the edge\'s `acme.hosts` does not name the host.',
  tags: ['Relay'],
  errors: [403, 409],
  request: { body: { required: true, content: { 'application/json': { schema: AcmeLeaseSchema } } } },
  responses: {
    200: { description: 'Whether this node orders now, and until when', content: { 'application/json': { schema: AcmeLeaseAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const node = c.get('relayNode');
  assertAcmeNode(node);
  const answer = await requestLease(c.get('db'), c.get('config'), node.id, c.req.valid('json').host);
  return c.json(answer, 200);
};
