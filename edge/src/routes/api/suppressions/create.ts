import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateSuppressionSchema, SuppressionSchema } from '../../../contracts/suppression.js';
import { createSuppression } from '../../../services/suppressions/create.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/suppressions',
  permission: 'suppressions:write',
  summary: 'Suppress an address',
  description: 'Inbound mail from this sender is stored as `rejected` (`status_reason: "sender suppressed"`). The address is stored bare and lower case; a duplicate is 409.',
  tags: ['Suppressions'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateSuppressionSchema } } } },
  errors: [409],
  responses: {
    201: { description: 'Suppression created', content: { 'application/json': { schema: z.object({ suppression: SuppressionSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ suppression: await createSuppression(c.get('db'), c.get('projectId'), c.req.valid('json')) }, 201);
