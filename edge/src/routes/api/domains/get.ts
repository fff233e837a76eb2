import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { DomainSchema } from '../../../contracts/domain.js';
import { getDomain } from '../../../services/domains/get.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/domains/{id}',
  permission: 'domains:read',
  summary: 'Get a domain',
  description: 'With its verification status and the DNS records to publish, each with the verdict of the last check.',
  tags: ['Domains'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The domain', content: { 'application/json': { schema: z.object({ domain: DomainSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ domain: await getDomain(c.get('db'), c.get('config'), c.get('projectId'), c.req.valid('param').id) }, 200);
