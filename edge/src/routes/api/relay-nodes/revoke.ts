import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { RelayNodeSchema } from '../../../contracts/relay-node.js';
import { revokeRelayNode } from '../../../services/relay-nodes/revoke.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/relay/nodes/{id}/revoke',
  permission: 'relay:write',
  summary: 'Revoke a relay node',
  description: 'Effective on the node\'s next call to the edge (401 `relay node revoked`), after which it stops its listeners. The record stays in the list with `revoked: true`; revoking twice is harmless.',
  tags: ['Relay nodes'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The revoked node', content: { 'application/json': { schema: z.object({ relay_node: RelayNodeSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ relay_node: await revokeRelayNode(c.get('db'), c.get('projectId'), c.req.valid('param').id) }, 200);
