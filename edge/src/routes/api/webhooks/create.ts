import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateWebhookSchema, WebhookWithSecretSchema } from '../../../contracts/webhook.js';
import { createWebhook } from '../../../services/webhooks/create.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks',
  permission: 'webhooks:write',
  summary: 'Create a webhook',
  description: [
    'Subscribes `url` to `events`, optionally only for senders matching `filters`. Every event is POSTed as `{event, timestamp, data}` with headers `X-Service-Timestamp` (Unix seconds) and `X-Service-Signature: sha256=<hex>`, the HMAC-SHA256 under `secret` of `<timestamp>.<raw body>`; docs/webhooks.md shows how to verify it.',
    'Any 2xx answer is success; redirects are not followed. At most `webhook.max_attempts` attempts (default 3, the first included), `webhook.retry_delay` apart (default 10s), each bounded by `webhook.timeout` (default 10s); every attempt is recorded (`GET /api/v1/webhooks/{id}/deliveries`).',
    'The URL host is resolved now and before every delivery: loopback, RFC 1918 and other reserved space are refused (400 naming `url`) unless `webhook.allow_private_targets` is set; when the resolver cannot answer the answer is 503 and nothing is created.',
    '`secret` appears in this response only. There is no update: create a new webhook and delete the old one.',
  ].join('\n\n'),
  tags: ['Webhooks'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateWebhookSchema } } } },
  errors: [503],
  responses: {
    201: { description: 'Webhook created, with its signing secret (shown once)', content: { 'application/json': { schema: z.object({ webhook: WebhookWithSecretSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await createWebhook(c.get('db'), c.get('config'), c.get('projectId'), c.req.valid('json')), 201);
