import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { ANALYTICS_DEFAULT_DAYS, ANALYTICS_MAX_DAYS, AnalyticsQuery, AnalyticsSchema } from '../../../contracts/analytics.js';
import { dailyCounts } from '../../../services/analytics/daily-counts.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/analytics',
  permission: 'analytics:read',
  summary: 'Email counts by status per day',
  description: `Emails (one per recipient) by UTC day of creation and current status, for \`from\` to \`to\` inclusive (UTC days, \`YYYY-MM-DD\`; default the last ${ANALYTICS_DEFAULT_DAYS} days up to today; at most ${ANALYTICS_MAX_DAYS} days), every day present with zeros; optionally only sends from one \`domain\` or carrying one \`tag\`; with totals and bounce and complaint rates. 400 naming the parameter for a malformed date, \`to\` before \`from\`, or a longer range. Read from a daily aggregate: as fast at a million emails as at ten.`,
  tags: ['Analytics'],
  request: { query: AnalyticsQuery },
  responses: {
    200: { description: 'The range\'s counts', content: { 'application/json': { schema: z.object({ analytics: AnalyticsSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ analytics: await dailyCounts(c.get('db'), c.get('projectId'), c.req.valid('query')) }, 200);
