import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { retryInboundEmail } from '../../../services/inbound-emails/retry.js';
import { handOverOutbox } from '../../../services/webhook-outbox/hand-over.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/inbound-emails/{id}/retry',
  permission: 'inbound:write',
  summary: 'Re-emit inbound.received',
  description: 'Allowed in any status; the stored record is not parsed again. `emitted: true` means the event was queued for the webhook dispatcher, not that a receiver answered.',
  tags: ['Inbound email'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'Event queued', content: { 'application/json': { schema: z.object({ emitted: z.boolean() }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  const projectId = c.get('projectId');
  const { emitted, outboxId } = await retryInboundEmail(c.get('db'), projectId, c.req.valid('param').id);
  c.executionCtx.waitUntil(handOverOutbox(c.env, projectId, [outboxId]));
  return c.json({ emitted }, 200);
};
