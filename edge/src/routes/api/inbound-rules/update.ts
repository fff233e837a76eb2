import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { InboundRuleSchema, UpdateInboundRuleSchema } from '../../../contracts/inbound-rule.js';
import { updateInboundRule } from '../../../services/inbound-rules/update.js';

export const route = defineRoute({
  method: 'patch',
  path: '/api/v1/inbound-rules/{id}',
  permission: 'inbound:write',
  summary: 'Update an inbound routing rule',
  description: 'Changes the fields given. `position` moves the rule (past the end: last) and shifts the rules between by one: this is how rules are reordered. A new `action` clears the parameters of the old one; its own are required as at create. Another project\'s rule is 404.',
  tags: ['Inbound rules'],
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: UpdateInboundRuleSchema } } } },
  errors: [404],
  responses: {
    200: { description: 'The rule', content: { 'application/json': { schema: z.object({ inbound_rule: InboundRuleSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await updateInboundRule(c.get('db'), c.get('projectId'), c.req.valid('param').id, c.req.valid('json')), 200);
