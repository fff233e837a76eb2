import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteDomain } from '../../../services/domains/delete.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/domains/{id}',
  permission: 'domains:delete',
  summary: 'Delete a domain',
  description: 'Relay nodes stop accepting mail for it when they next refresh their domain list. Inbound mail already stored stays, with `domain_id` null.',
  tags: ['Domains'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  await deleteDomain(c.get('db'), c.get('projectId'), c.req.valid('param').id);
  return c.body(null, 204);
};
