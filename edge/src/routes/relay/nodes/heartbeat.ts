import type { RouteHandler } from '@hono/zod-openapi';
import { CHATTER_BODY_BYTES, defineRelayRoute } from '../../../http/define-relay-route.js';
import { HeartbeatAnswerSchema, HeartbeatSchema } from '../../../contracts/relay.js';
import { recordHeartbeat } from '../../../services/relay-nodes/heartbeat.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRelayRoute({
  method: 'post',
  path: '/relay/v1/heartbeat',
  credential: 'node',
  limiter: 'relay_node_chatter',
  bodyLimit: () => CHATTER_BODY_BYTES,
  summary: 'Report a relay node\'s state',
  description: 'Sent every 30 s. Records version, listeners, TLS state, spool depth, the time and the calling address. A changed `domains_version` tells the node to fetch `/relay/v1/domains` now.',
  tags: ['Relay'],
  request: { body: { required: true, content: { 'application/json': { schema: HeartbeatSchema } } } },
  responses: {
    200: {
      description: 'Recorded',
      content: { 'application/json': { schema: HeartbeatAnswerSchema } },
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json(await recordHeartbeat(c.get('db'), c.get('relayNode'), c.req.valid('json'), c.get('clientIp')), 200);
