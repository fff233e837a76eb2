import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CreateIdentityProviderSchema, IdentityProviderSchema } from '../../../contracts/identity-provider.js';
import { createIdentityProvider } from '../../../services/identity-providers/create.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/identity-providers',
  permission: 'platform:admin',
  summary: 'Add an OpenID Connect identity provider',
  description: [
    'Lets people sign in to the console through the provider (docs/sso.md). Register the answer\'s `redirect_uri` at the provider.',
    'The issuer is kept exactly as written and must pass the policy (https; http only on loopback; no user name, password, query or fragment) and discovery:',
    '`<issuer>/.well-known/openid-configuration` must answer, within 5 s, metadata with the same `issuer` and the authorization, token and JWKS endpoints.',
    '400 naming the field, nothing stored: a field out of its bounds or missing, an issuer refused by the policy or by discovery (the reason named),',
    'a `default_project_id` that does not exist, `default_role` `owner` (a stranger\'s first sign-in must not own a project), an allowed domain that is not a domain name, more than 100 of them.',
    '409: the name is taken. The client secret is sealed and never returned. A platform credential only: project keys (even `*`) and console sessions are refused with 403 `admin privileges required`.',
  ].join(' '),
  tags: ['Admin'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateIdentityProviderSchema } } } },
  errors: [409],
  responses: {
    201: { description: 'Added', content: { 'application/json': { schema: z.object({ identity_provider: IdentityProviderSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ identity_provider: await createIdentityProvider(c.get('db'), c.get('config'), c.req.valid('json')) }, 201);
