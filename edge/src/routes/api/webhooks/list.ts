import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { WebhookSchema } from '../../../contracts/webhook.js';
import { listWebhooks } from '../../../services/webhooks/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/webhooks',
  permission: 'webhooks:read',
  summary: 'List webhooks',
  description: 'Every webhook of the project, newest first. Signing secrets are never listed: rotate one to see a new secret.',
  tags: ['Webhooks'],
  responses: {
    200: { description: 'The project\'s webhooks', content: { 'application/json': { schema: z.object({ webhooks: z.array(WebhookSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await listWebhooks(c.get('db'), c.get('projectId')), 200);
