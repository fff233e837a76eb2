import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { IdentityProviderSchema, UpdateIdentityProviderSchema } from '../../../contracts/identity-provider.js';
import { updateIdentityProvider } from '../../../services/identity-providers/update.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'patch',
  path: '/api/v1/admin/identity-providers/{id}',
  permission: 'platform:admin',
  summary: 'Change an identity provider',
  description: [
    'Any subset of the writable fields (docs/sso.md); the others stay. A new `client_secret` replaces the sealed one.',
    'A changed issuer passes the policy and discovery again, as at creation. Refusals are those of creation (400 naming the field, 409 for a taken name),',
    'plus 400 for an empty body; nothing is changed by a refused request. Users already linked keep their link; sign-ins under way finish with the new settings. `enabled: false` ends every session opened through the provider at once (`/api/v1`, `/app/api` and the event stream at its next session check); enabling it again does not bring them back. A platform credential only: project keys (even `*`) and console sessions are refused with 403 `admin privileges required`.',
  ].join(' '),
  tags: ['Admin'],
  request: { params: IdParams, body: { required: true, content: { 'application/json': { schema: UpdateIdentityProviderSchema } } } },
  errors: [404, 409],
  responses: {
    200: { description: 'Changed', content: { 'application/json': { schema: z.object({ identity_provider: IdentityProviderSchema }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ identity_provider: await updateIdentityProvider(c.get('db'), c.get('config'), c.req.valid('param').id, c.req.valid('json')) }, 200);
