import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { RenewAnswerSchema, RenewSchema } from '../../../contracts/relay-outbound.js';
import { renewLeases } from '../../../services/delivery/renew-leases.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/outbound/renew',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Renew the leases of outbound jobs the node still holds',
  description: 'The node names the jobs it holds (waiting for a delivery slot, being delivered, or with a result not yet reported; at most 200) by `email_id` and `attempt`; each one still `sending`, leased to this node at that attempt, gets its lease moved to `now() + outbound.lease` in one statement (a lease that ran out but was not claimed again included). The others are answered `lost` and nothing changes: another claim took them (a new attempt) or their result was recorded. A node renews every third of the lease while it holds jobs, so a slow delivery or a long wait for a slot never outlives its lease while the node is alive; a node that dies stops renewing and its leases run out as before (docs/sending.md, "Leases").',
  tags: ['Relay'],
  request: { body: { required: true, content: { 'application/json': { schema: RenewSchema } } } },
  responses: {
    200: { description: 'Which leases were renewed, with their new end, and which are no longer this node\'s', content: { 'application/json': { schema: RenewAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const answer = await renewLeases({ db: c.get('db'), config: c.get('config'), node: c.get('relayNode') }, c.req.valid('json').leases);
  return c.json(answer, 200);
};
