import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { forbidden } from '../../../http/errors.js';
import { SsoPolicySchema, UpdateSsoPolicySchema } from '../../../contracts/settings.js';
import { setSsoPolicy } from '../../../services/projects/sso-policy.js';

export const route = defineRoute({
  method: 'put',
  path: '/api/v1/project/sso',
  permission: 'sso:write',
  role: 'owner',
  summary: 'Change the project\'s SSO policy',
  description: 'Requires (or stops requiring) single sign-on for the project\'s members (docs/console.md, "SSO policy"). Only the project\'s owner, signed in, may: a session of an admin or a member is refused with 403, as is every API key, even one holding `*` (`sso:write` is never granted to a key), and a platform credential (the owner decides, not the operator).',
  tags: ['Project'],
  auditType: 'sso_policy.updated',
  request: { body: { required: true, content: { 'application/json': { schema: UpdateSsoPolicySchema } } } },
  responses: { 200: { description: 'The policy as stored', content: { 'application/json': { schema: SsoPolicySchema } } } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  // Keys are refused by the permission check (sso:write is session-only); the
  // platform credential passes it as owner-equivalent, but this one is the owner's alone.
  if (c.get('principal').kind !== 'session') throw forbidden('only the project owner, signed in, may change the SSO policy; no API key or platform credential can');
  return c.json(await setSsoPolicy(c.get('db'), c.get('projectId'), c.req.valid('json').required), 200);
};
