import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { DELIVERIES_LIMIT_DEFAULT, DELIVERIES_LIMIT_MAX, ListDeliveriesQuery, WebhookDeliveryCursorSchema, WebhookDeliverySchema } from '../../../contracts/webhook.js';
import { listDeliveries } from '../../../services/webhooks/deliveries.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/webhooks/{id}/deliveries',
  permission: 'webhooks:read',
  summary: 'List a webhook\'s deliveries',
  description: `One delivery per event sent to the webhook (and per redelivery), each with its attempt log. A delivery is \`pending\` until an attempt gets a 2xx answer (\`succeeded\`) or \`webhook.max_attempts\` attempts, \`webhook.retry_delay\` apart, ran out (\`failed\`). Newest first by \`(created_at, id)\`, a page at a time: \`limit\` defaults to ${DELIVERIES_LIMIT_DEFAULT} (at most ${DELIVERIES_LIMIT_MAX}). For the next page send \`next.before\` and \`next.before_id\` as \`before\` and \`before_id\`; one without the other is 400. \`next\` is null on the last page. No total, no offset.`,
  tags: ['Webhooks'],
  request: { params: IdParams, query: ListDeliveriesQuery },
  errors: [404],
  responses: {
    200: {
      description: 'A page of deliveries',
      content: { 'application/json': { schema: z.object({ deliveries: z.array(WebhookDeliverySchema), next: WebhookDeliveryCursorSchema.nullable() }) } },
    },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const { limit, status, before, before_id } = c.req.valid('query');
  const cursor = before !== undefined && before_id !== undefined ? { before, before_id } : undefined;
  return c.json(await listDeliveries(c.get('db'), c.get('projectId'), c.req.valid('param').id, { limit, status, cursor }), 200);
};
