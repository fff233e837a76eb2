import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { InboundRulesTestAnswerSchema, TestInboundRulesSchema } from '../../../contracts/inbound-rule.js';
import { testInboundRules } from '../../../services/inbound-rules/test.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/inbound-rules/test',
  permission: 'inbound:read',
  // Evaluates only: nothing changes, so there is nothing to audit.
  auditType: null,
  summary: 'Test the inbound routing rules',
  description: 'Evaluates the project\'s rules against a stored message (`inbound_email_id`, another project\'s is 404) or a message described by its facts (`message`: recipients, sender, subject, headers, auth, spam), and answers the rule that matched (null: none), its action and what would happen. Nothing is stored, counted, sent or delivered.',
  tags: ['Inbound rules'],
  request: { body: { required: true, content: { 'application/json': { schema: TestInboundRulesSchema } } } },
  errors: [404],
  responses: {
    200: { description: 'The decision', content: { 'application/json': { schema: InboundRulesTestAnswerSchema } } },
  },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await testInboundRules(c.get('db'), c.get('projectId'), c.req.valid('json')), 200);
