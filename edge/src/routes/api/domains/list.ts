import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { DomainSchema } from '../../../contracts/domain.js';
import { listDomains } from '../../../services/domains/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/domains',
  permission: 'domains:read',
  summary: 'List domains',
  description: 'The project\'s domains, newest first.',
  tags: ['Domains'],
  responses: {
    200: { description: 'The project\'s domains', content: { 'application/json': { schema: z.object({ domains: z.array(DomainSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ domains: await listDomains(c.get('db'), c.get('config'), c.get('projectId')) }, 200);
