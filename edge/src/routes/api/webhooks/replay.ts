import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { REPLAY_MAX_DAYS, REPLAY_MAX_EVENTS, ReplayWebhookSchema, WebhookReplaySchema } from '../../../contracts/webhook.js';
import { wakeDispatcher } from '../../../services/webhook-outbox/hand-over.js';
import { replayWebhook } from '../../../services/webhooks/replay.js';
import { checkLimit, enforceLimit } from '../../../middleware/rate-limit.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks/{id}/replay',
  permission: 'webhooks:write',
  summary: 'Replay a time range of events to a webhook',
  description: [
    `Sends every event that happened in \`[since, until)\` again to this webhook, as new deliveries (each with \`replay_id\`, due at once in the order the events happened, with \`webhook.max_attempts\` attempts of their own), signed with the current secret. Only events the webhook takes now: its current \`events\` and \`filters\` (and a routing rule's choice of webhooks), whether or not it got them the first time.`,
    `Bounds: \`since\` at most ${REPLAY_MAX_DAYS} days ago (the outbox keeps events that long), \`until\` after \`since\` and at most ${REPLAY_MAX_DAYS} days after it, at most ${REPLAY_MAX_EVENTS} events; beyond any of them 400 naming it, nothing queued.`,
    'One replay per webhook at a time: 409 while a delivery of an earlier replay is pending, and for a disabled webhook (enable it first). At most `ratelimit.webhook_replay_per_minute` (5) replay requests per webhook per minute: 429 with Retry-After beyond, and the RateLimit-* headers of this answer describe that window. 202: queued; follow the deliveries in `GET /api/v1/webhooks/{id}/deliveries`.',
  ].join('\n\n'),
  tags: ['Webhooks'],
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: ReplayWebhookSchema } } } },
  errors: [404, 409],
  responses: {
    202: { description: 'The replay, queued', content: { 'application/json': { schema: z.object({ replay: WebhookReplaySchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const projectId = c.get('projectId');
  // Keyed by project too: another project naming this webhook's id spends its own window, not this one's.
  enforceLimit(await checkLimit(c, 'webhook_replay', `webhook-replay:${projectId}:${c.req.valid('param').id}`));
  const body = await replayWebhook(c.get('db'), projectId, c.req.valid('param').id, c.req.valid('json'));
  // After the response: the dispatcher sends them (the cron sweep wakes it if this is lost).
  if (body.replay.events) c.executionCtx.waitUntil(wakeDispatcher(c.env, projectId));
  return c.json(body, 202);
};
