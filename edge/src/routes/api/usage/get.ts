import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { UsageSchema } from '../../../schemas/email.js';
import { getUsage } from '../../../services/usage/get.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/usage',
  permission: 'emails:read',
  alsoGrantedBy: ['usage:read'],
  summary: 'Plan limits beside consumption',
  description: 'The plan\'s hourly and daily send limits (0: unlimited, `remaining` null) beside the rows of the email log in the trailing hour and day, counted as the send routes count them: suppressed recipients not counted, sandbox sends counted. Needs `emails:read` or `usage:read`.',
  tags: ['Emails'],
  responses: {
    200: { description: 'Usage', content: { 'application/json': { schema: z.object({ usage: UsageSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ usage: await getUsage(c.get('db'), c.get('projectId')!) }, 200);
