import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { DeliveryParams, WebhookDeliverySchema } from '../../../contracts/webhook.js';
import { wakeDispatcher } from '../../../services/webhook-outbox/hand-over.js';
import { redeliver } from '../../../services/webhooks/redeliver.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver',
  permission: 'webhooks:write',
  summary: 'Redeliver an event',
  description: 'Sends the event of a delivery again, whatever its status: a new delivery with the same `event`, `event_at` and `data`, `redelivery_of` naming the original, due now and with `webhook.max_attempts` attempts of its own, signed with the webhook\'s current secret. 202: queued, not yet answered; follow it in the delivery list.',
  tags: ['Webhooks'],
  request: { params: DeliveryParams },
  errors: [404],
  responses: {
    202: { description: 'The new delivery, pending', content: { 'application/json': { schema: z.object({ delivery: WebhookDeliverySchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const projectId = c.get('projectId');
  const { id, deliveryId } = c.req.valid('param');
  const body = await redeliver(c.get('db'), projectId, id, deliveryId);
  // After the response: the dispatcher attempts it (the cron sweep does if this hand-over is lost).
  c.executionCtx.waitUntil(wakeDispatcher(c.env, projectId));
  return c.json(body, 202);
};
