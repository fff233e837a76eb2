import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { IdentityProviderSchema } from '../../../contracts/identity-provider.js';
import { listIdentityProviders } from '../../../services/identity-providers/find.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/identity-providers',
  permission: 'platform:admin',
  summary: 'List the identity providers',
  description: 'Every OpenID Connect provider, by name (docs/sso.md). The client secret is never shown. A platform credential only: project keys (even `*`) and console sessions are refused with 403 `admin privileges required`.',
  tags: ['Admin'],
  responses: {
    200: { description: 'The providers', content: { 'application/json': { schema: z.object({ identity_providers: z.array(IdentityProviderSchema) }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ identity_providers: await listIdentityProviders(c.get('db'), c.get('config')) }, 200);
