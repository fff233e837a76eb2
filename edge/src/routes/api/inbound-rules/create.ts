import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { CreateInboundRuleSchema, INBOUND_RULES_MAX, InboundRuleSchema } from '../../../contracts/inbound-rule.js';
import { createInboundRule } from '../../../services/inbound-rules/create.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/inbound-rules',
  permission: 'inbound:write',
  summary: 'Create an inbound routing rule',
  description: [
    `Adds a rule at \`position\` (default last; the rules from there move down one). At most ${INBOUND_RULES_MAX} rules per project. Conditions (\`match\`) and their pattern dialects: docs/inbound-rules.md; a regex outside the bounded dialect is 400 naming the construct (\`nested quantifier\`, \`lookahead\`, \`back reference\`, …).`,
    'Actions: `store`; `webhooks` (`webhook_ids`: webhooks of this project, an unknown id is 400 naming it); `refuse` (`refuse_text`, answered `550 5.7.1 <text>` by the relay node at RCPT when the rule and every rule before it need only the recipient, else at the end of DATA); `drop` (accepted, not stored, counted in `matched_count`). A parameter of another action is 400. Relay nodes learn refusals with their domain list (a heartbeat later, seconds).',
  ].join('\n\n'),
  tags: ['Inbound rules'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateInboundRuleSchema } } } },
  responses: {
    201: { description: 'The rule', content: { 'application/json': { schema: z.object({ inbound_rule: InboundRuleSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await createInboundRule(c.get('db'), c.get('projectId'), c.req.valid('json')), 201);
