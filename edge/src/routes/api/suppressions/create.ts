import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateSuppressionSchema, SuppressionSchema } from '../../../contracts/suppression.js';
import { createSuppression } from '../../../services/suppressions/create.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/suppressions',
  permission: 'suppressions:write',
  summary: 'Suppress an address',
  description: 'Sends to this address get a `suppressed` row (`error_message: "recipient is suppressed (<reason>)"`) and inbound mail from it is stored as `rejected` (`status_reason: "sender suppressed"`), until `expires_at` if given. The address is stored bare and lower case. `reason` is one of `hard_bounce`, `complaint`, `manual` (the default), `unsubscribe` (400 naming the value otherwise); `detail` is free text, 1 to 200 characters; `expires_at` must be in the future (no maximum). An entry of the address that still applies is 409; an expired one is replaced.',
  tags: ['Suppressions'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateSuppressionSchema } } } },
  errors: [409],
  responses: {
    201: { description: 'Suppression created', content: { 'application/json': { schema: z.object({ suppression: SuppressionSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ suppression: await createSuppression(c.get('db'), c.get('projectId'), c.req.valid('json')) }, 201);
