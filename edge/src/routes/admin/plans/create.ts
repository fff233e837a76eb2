import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CreatePlanSchema, PlanSchema } from '../../../contracts/admin.js';
import { createPlan } from '../../../services/plans/create.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/plans',
  permission: 'platform:admin',
  summary: 'Create a plan',
  description: 'Send limits per hour and per day; 0 means unlimited.',
  tags: ['Admin'],
  request: { body: { required: true, content: { 'application/json': { schema: CreatePlanSchema } } } },
  errors: [409],
  responses: { 201: { description: 'Plan created', content: { 'application/json': { schema: z.object({ plan: PlanSchema }) } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ plan: await createPlan(c.get('db'), c.req.valid('json')) }, 201);
