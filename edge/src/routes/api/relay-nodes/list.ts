import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { RelayNodeSchema } from '../../../contracts/relay-node.js';
import { listRelayNodes } from '../../../services/relay-nodes/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/relay/nodes',
  permission: 'relay:read',
  summary: 'List relay nodes',
  description: 'The nodes this project enrolled, newest first, revoked ones included, each with what its last heartbeat reported (`last_heartbeat_at` null until the first).',
  tags: ['Relay nodes'],
  responses: {
    200: { description: 'The project\'s relay nodes', content: { 'application/json': { schema: z.object({ relay_nodes: z.array(RelayNodeSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ relay_nodes: await listRelayNodes(c.get('db'), c.get('projectId')) }, 200);
