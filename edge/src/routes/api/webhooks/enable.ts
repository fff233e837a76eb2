import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { WebhookSchema } from '../../../contracts/webhook.js';
import { enableWebhook } from '../../../services/webhooks/enable.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks/{id}/enable',
  permission: 'webhooks:write',
  summary: 'Enable a webhook again',
  description: 'A webhook is disabled (`status: "disabled"`) when every attempt to it has failed for `webhook.disable_after` (5 days) and at least `webhook.disable_after_failures` (10) times; while disabled no event is enqueued for it. This enables it and resets its failure span (`failing_since` null, `consecutive_failures` 0): events from now on are delivered. Events of the time it was disabled can be sent with `POST /api/v1/webhooks/{id}/replay`. Enabling an enabled webhook only resets its span.',
  tags: ['Webhooks'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The webhook, enabled', content: { 'application/json': { schema: z.object({ webhook: WebhookSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await enableWebhook(c.get('db'), c.get('projectId'), c.req.valid('param').id), 200);
