import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { IdentityProviderSchema } from '../../../contracts/identity-provider.js';
import { findIdentityProvider } from '../../../services/identity-providers/find.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/identity-providers/{id}',
  permission: 'platform:admin',
  summary: 'Get an identity provider',
  description: 'The provider (docs/sso.md); the client secret is never shown. A platform credential only: project keys (even `*`) and console sessions are refused with 403 `admin privileges required`.',
  tags: ['Admin'],
  request: { params: IdParams },
  errors: [404],
  responses: {
    200: { description: 'The provider', content: { 'application/json': { schema: z.object({ identity_provider: IdentityProviderSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ identity_provider: await findIdentityProvider(c.get('db'), c.get('config'), c.req.valid('param').id) }, 200);
