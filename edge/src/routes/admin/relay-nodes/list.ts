import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { integerQuery, Uuid } from '../../../contracts/common.js';
import { RelayNodeSchema } from '../../../contracts/relay-node.js';
import { listAllRelayNodes } from '../../../services/relay-nodes/list-all.js';
import type { AppEnv } from '../../../env.js';

const AdminRelayNodeSchema = RelayNodeSchema.extend({
  project_name: z.string(),
  installation_wide: z.boolean().openapi({ description: 'The node serves every project\'s domains (`edgemail relay scope --installation-wide`), not only its own project\'s' }),
}).openapi('AdminRelayNode');

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/relay-nodes',
  permission: 'platform:admin',
  summary: 'List relay nodes of every project',
  description: 'The relay nodes of the whole installation, newest first, revoked ones included, each with its project and what its last heartbeat reported (version, listeners, TLS, spool depth, dead letters; `last_heartbeat_at` null until the first). `project_id` keeps one project\'s. A page at a time (`limit` 1 to 500, default 100; `offset`); `total` counts them.',
  request: {
    query: z.object({
      project_id: Uuid.optional().openapi({ param: { name: 'project_id', in: 'query' } }),
      limit: integerQuery('limit', 1, 500, 100),
      offset: integerQuery('offset', 0, 1_000_000, 0),
    }),
  },
  responses: {
    200: {
      description: 'A page of relay nodes',
      content: { 'application/json': { schema: z.object({ relay_nodes: z.array(AdminRelayNodeSchema), total: z.number().int(), limit: z.number().int(), offset: z.number().int() }).openapi('AdminRelayNodePage') } },
    },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { project_id: projectId, limit, offset } = c.req.valid('query');
  return c.json({ ...(await listAllRelayNodes(c.get('db'), { projectId }, { limit, offset })), limit, offset }, 200);
};
