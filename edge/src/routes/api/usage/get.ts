import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { UsageSchema } from '../../../contracts/email.js';
import { getUsage } from '../../../services/usage/get.js';
import { evaluateComplaintThreshold, healthNotices } from '../../../services/sender-health/evaluate.js';
import { handOverOutbox } from '../../../services/webhook-outbox/hand-over.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/usage',
  // One permission: the counts are rows of the email log, which emails:read shows in full
  // anyway, and both of the spec's sets that want them (sender, reporting) hold it.
  permission: 'emails:read',
  summary: 'Plan limits beside consumption',
  description: 'The plan\'s hourly and daily send limits (0: unlimited, `remaining` null) beside the rows of the email log in the trailing hour and day, counted as the send routes count them: suppressed recipients not counted, sandbox sends counted. `notices` holds what the project should act on: while its complaint rate over the trailing 7 days is over `sending.complaint_threshold_basis_points` (0.3% by default; checked here and every minute), a `complaint_rate_over_threshold` notice (docs/analytics.md, "Sender health"). Needs `emails:read` (403 `permission emails:read required` without it).',
  tags: ['Emails'],
  responses: {
    200: { description: 'Usage', content: { 'application/json': { schema: z.object({ usage: UsageSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const db = c.get('db');
  const projectId = c.get('projectId');
  const config = c.get('config');
  // The threshold is checked here too (the cron does every minute): a crossing fires once, whoever sees it first.
  const events = await evaluateComplaintThreshold(db, config, projectId);
  for (const [id, rows] of events) c.executionCtx.waitUntil(handOverOutbox(c.env, id, rows));
  return c.json({ usage: await getUsage(db, projectId, await healthNotices(db, config, projectId)) }, 200);
};
