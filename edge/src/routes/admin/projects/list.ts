import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { AdminProjectPageSchema } from '../../../contracts/admin.js';
import { integerQuery } from '../../../contracts/common.js';
import { listAllProjects } from '../../../services/projects/list-all.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/projects',
  permission: 'platform:admin',
  summary: 'List projects',
  description: 'Every project of the installation, newest first, a page at a time (`limit` 1 to 200, default 50; `offset`). `q` keeps the projects whose name holds it, case-insensitively (`%` and `_` match themselves). `total` counts the matching projects.',
  request: {
    query: z.object({
      q: z.string().trim().max(100, 'must be at most 100 characters').optional().openapi({ param: { name: 'q', in: 'query' }, example: 'acme' }),
      limit: integerQuery('limit', 1, 200, 50),
      offset: integerQuery('offset', 0, 1_000_000, 0),
    }),
  },
  responses: { 200: { description: 'A page of projects', content: { 'application/json': { schema: AdminProjectPageSchema } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const { q, limit, offset } = c.req.valid('query');
  const page = await listAllProjects(c.get('db'), q || undefined, { limit, offset });
  return c.json({ ...page, limit, offset }, 200);
};
