import type { RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { IdParams } from '../../../contracts/common.js';
import { deleteIdentityProvider } from '../../../services/identity-providers/delete.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/admin/identity-providers/{id}',
  permission: 'platform:admin',
  summary: 'Delete an identity provider',
  description: 'Removes the provider and the links of users to their identities there (docs/sso.md): nobody can sign in through it any more, and a sign-in under way through it fails. Every session opened through it ends (`/api/v1`, `/app/api` and the event stream at its next session check); it drops out of every project\'s SSO policy. The users themselves and their memberships stay; they can still sign in another way. A platform credential only: project keys (even `*`) and console sessions are refused with 403 `admin privileges required`.',
  tags: ['Admin'],
  request: { params: IdParams },
  errors: [404],
  responses: { 204: { description: 'Deleted' } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  await deleteIdentityProvider(c.get('db'), c.req.valid('param').id);
  return c.body(null, 204);
};
