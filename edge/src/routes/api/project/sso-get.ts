import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { SsoPolicySchema } from '../../../contracts/settings.js';
import { ssoPolicy } from '../../../services/projects/sso-policy.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/project/sso',
  permission: 'members:read',
  summary: 'Read the project\'s SSO policy',
  description: 'Whether the project\'s members must sign in through single sign-on, and the identity providers whose sessions it accepts (`provider_ids`; docs/console.md, "SSO policy"). Every role reads it; a key needs `members:read`.',
  tags: ['Project'],
  responses: { 200: { description: 'The policy', content: { 'application/json': { schema: SsoPolicySchema } } } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) =>
  c.json(await ssoPolicy(c.get('db'), c.get('projectId')), 200);
