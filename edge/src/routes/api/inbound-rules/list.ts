import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { InboundRuleSchema } from '../../../contracts/inbound-rule.js';
import { listInboundRules } from '../../../services/inbound-rules/list.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/inbound-rules',
  permission: 'inbound:read',
  summary: 'List inbound routing rules',
  description: 'Every rule of the project in the order they are tried (`position` 1 first); the first whose conditions all hold decides what happens to a message, and mail no rule matches is stored (docs/inbound-rules.md).',
  tags: ['Inbound rules'],
  responses: {
    200: { description: 'The rules, in order', content: { 'application/json': { schema: z.object({ inbound_rules: z.array(InboundRuleSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await listInboundRules(c.get('db'), c.get('projectId')), 200);
