import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { inboundStats } from '../../../services/inbound-emails/stats.js';

const count = z.number().int().min(0);

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/inbound-emails/stats',
  permission: 'inbound:read',
  summary: 'Inbound email counts by status',
  description: 'Every status is present, zeros included.',
  tags: ['Inbound email'],
  responses: {
    200: {
      description: 'Counts of the project\'s inbound records',
      content: { 'application/json': { schema: z.object({ counts: z.object({ received: count, rejected: count, failed: count }) }) } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ counts: await inboundStats(c.get('db'), c.get('projectId')) }, 200);
