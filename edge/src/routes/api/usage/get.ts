import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { UsageSchema } from '../../../contracts/email.js';
import { getUsage } from '../../../services/usage/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/usage',
  // One permission: the counts are rows of the email log, which emails:read shows in full
  // anyway, and both of the spec's sets that want them (sender, reporting) hold it.
  permission: 'emails:read',
  summary: 'Plan limits beside consumption',
  description: 'The plan\'s hourly and daily send limits (0: unlimited, `remaining` null) beside the rows of the email log in the trailing hour and day, counted as the send routes count them: suppressed recipients not counted, sandbox sends counted. Needs `emails:read` (403 `permission emails:read required` without it).',
  tags: ['Emails'],
  responses: {
    200: { description: 'Usage', content: { 'application/json': { schema: z.object({ usage: UsageSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ usage: await getUsage(c.get('db'), c.get('projectId')) }, 200);
