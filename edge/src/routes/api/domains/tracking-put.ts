import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { DomainTrackingSchema, PutDomainTrackingSchema } from '../../../contracts/tracking.js';
import { putDomainTracking } from '../../../services/tracking/domain-setting.js';

export const route = defineRoute({
  method: 'put',
  path: '/api/v1/domains/{id}/tracking',
  permission: 'domains:write',
  auditType: 'domain.tracking_update',
  summary: 'Set a domain\'s open and click tracking',
  description: [
    'Turns open and click tracking on or off for mail from this domain (docs/tracking.md); a send\'s own `tracking` overrides it per message. Applies to recipients claimed from now on.',
    '`host`: a custom tracking host under the domain (`links.<domain>`), so tracked URLs show the sender\'s name. It must be published as `<host> CNAME <the service\'s host>`: the CNAME is looked up now through `dns.doh_url`, and a host whose CNAME is not found is 400 naming `host`, as is a host outside the domain or one of a domain whose ownership is not proven. 503 when the resolver does not answer. Omitted or null: the service\'s own host.',
  ].join('\n\n'),
  tags: ['Domains'],
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: PutDomainTrackingSchema } } } },
  errors: [404, 503],
  responses: {
    200: { description: 'The setting', content: { 'application/json': { schema: z.object({ tracking: DomainTrackingSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ tracking: await putDomainTracking(c.get('db'), c.get('config'), c.get('projectId'), c.req.valid('param').id, c.req.valid('json')) }, 200);
