import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { PlanSchema } from '../../../contracts/admin.js';
import { listPlans } from '../../../services/plans/list.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/plans',
  permission: 'platform:admin',
  summary: 'List plans',
  description: 'Every plan, oldest first (not paged: an installation has a handful). A limit of 0 is no limit.',
  responses: { 200: { description: 'Every plan', content: { 'application/json': { schema: z.object({ plans: z.array(PlanSchema) }) } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ plans: await listPlans(c.get('db')) }, 200);
