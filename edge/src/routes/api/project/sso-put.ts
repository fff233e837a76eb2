import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute, type ProjectEnv } from '../../../http/define-route.js';
import { ApiError, forbidden } from '../../../http/errors.js';
import { SsoPolicySchema, UpdateSsoPolicySchema } from '../../../contracts/settings.js';
import { setSsoPolicy } from '../../../services/projects/sso-policy.js';

const SSO_FIRST = 'sign in through single sign-on before requiring it: this session was not, and requiring single sign-on would lock it out of the project at once';

export const route = defineRoute({
  method: 'put',
  path: '/api/v1/project/sso',
  permission: 'sso:write',
  role: 'owner',
  summary: 'Change the project\'s SSO policy',
  description: [
    'Requires (or stops requiring) single sign-on for the project\'s members, through the identity providers it names (docs/console.md, "SSO policy"):',
    'once required, only sessions opened through one of `provider_ids` may act in the project; a password or passkey session, or a session of any other',
    'provider, is refused with 403. `provider_ids`: existing, enabled providers (400 naming `provider_ids` otherwise); omitted, the stored list stays, or,',
    'when this request turns the policy on, it is the provider of the requesting session. Only the project\'s owner, signed in, may: a session of an admin',
    'or a member is refused with 403, as is every API key, even one holding `*` (`sso:write` is never granted to a key), and a platform credential (the owner',
    'decides, not the operator). Requiring it from a session not opened through single sign-on, or with a list without the requesting session\'s own',
    'provider, is refused with 409 (it would lock that owner out of the project at once). Nothing is changed by a refused request.',
  ].join(' '),
  tags: ['Project'],
  auditType: 'sso_policy.updated',
  request: { body: { required: true, content: { 'application/json': { schema: UpdateSsoPolicySchema } } } },
  errors: [409],
  responses: { 200: { description: 'The policy as stored', content: { 'application/json': { schema: SsoPolicySchema } } } },
});

export const handler: RouteHandler<typeof route, ProjectEnv> = async (c) => {
  // Keys are refused by the permission check (sso:write is session-only); the
  // platform credential passes it as owner-equivalent, but this one is the owner's alone.
  const principal = c.get('principal');
  if (principal.kind !== 'session') throw forbidden('only the project owner, signed in, may change the SSO policy; no API key or platform credential can');
  const { required, provider_ids } = c.req.valid('json');
  if (required && !principal.identityProviderId) throw new ApiError(409, SSO_FIRST);
  return c.json(await setSsoPolicy(c.get('db'), c.get('projectId'), { required, providerIds: provider_ids }, principal.identityProviderId), 200);
};
