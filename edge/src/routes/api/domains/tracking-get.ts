import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { DomainTrackingSchema } from '../../../contracts/tracking.js';
import { getDomainTracking } from '../../../services/tracking/domain-setting.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/domains/{id}/tracking',
  permission: 'domains:read',
  summary: 'A domain\'s open and click tracking',
  description: 'Whether mail from this domain is tracked (off until set) and its custom tracking host, if any (docs/tracking.md).',
  tags: ['Domains'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The setting', content: { 'application/json': { schema: z.object({ tracking: DomainTrackingSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ tracking: await getDomainTracking(c.get('db'), c.get('config'), c.get('projectId'), c.req.valid('param').id) }, 200);
