import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { WebhookWithSecretSchema } from '../../../contracts/webhook.js';
import { rotateWebhookSecret } from '../../../services/webhooks/rotate-secret.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/webhooks/{id}/rotate-secret',
  permission: 'webhooks:write',
  summary: 'Rotate a webhook\'s signing secret',
  description: 'Replaces the signing secret at once and sets `secret_rotated_at`; the old secret is not kept. The secret is read at every attempt, so the next attempt of any delivery, retries included, is signed with the new one (docs/webhooks.md). The new `secret` appears in this response only.',
  tags: ['Webhooks'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The webhook with its new secret (shown once)', content: { 'application/json': { schema: z.object({ webhook: WebhookWithSecretSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await rotateWebhookSecret(c.get('db'), c.get('config')['database.crypto.encryption_key'], c.get('projectId'), c.req.valid('param').id), 200);
