import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { InboundRuleSchema } from '../../../contracts/inbound-rule.js';
import { findInboundRule } from '../../../services/inbound-rules/find.js';
import { presentInboundRule } from '../../../services/inbound-rules/present.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/inbound-rules/{id}',
  permission: 'inbound:read',
  summary: 'Get an inbound routing rule',
  description: 'Another project\'s rule is 404, as an unknown id.',
  tags: ['Inbound rules'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The rule', content: { 'application/json': { schema: z.object({ inbound_rule: InboundRuleSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json({ inbound_rule: presentInboundRule(await findInboundRule(c.get('db'), c.get('projectId'), c.req.valid('param').id)) }, 200);
