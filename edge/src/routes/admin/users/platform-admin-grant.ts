import { type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { PlatformAdminResultSchema } from '../../../contracts/admin.js';
import { IdParams } from '../../../contracts/common.js';
import { assertRecentSignIn } from '../../../services/console/recent-sign-in.js';
import { setPlatformAdmin } from '../../../services/users/set-platform-admin.js';
import { grantedBy } from './granted-by.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'put',
  path: '/api/v1/admin/users/{id}/platform-admin',
  permission: 'platform:admin',
  auditType: 'user.platform_admin_granted',
  summary: 'Make a user a platform admin',
  description: [
    'Sets `platform_admin` on the user: from the next request on, a console session of that user may use every `/api/v1/admin` route, as a platform credential does (docs/console.md "Platform admins in the console").',
    'Idempotent (`changed: false` when the user already was one). An unknown user is 404.',
    'Only a platform admin reaches it: a platform credential, or the session of a user who is one already; a session doing it must have signed in within the last 15 minutes (403 `sign in again to …`, nothing changed), as for the other steps that hand out a lasting way in.',
    'Written to the admin trail as `user.platform_admin_granted` and, when it changed, to the user\'s own security trail as `auth.platform_admin.granted` (`detail`: `credential=<id>` or `user=<id>`).',
  ].join(' '),
  request: { params: IdParams },
  errors: [404],
  responses: { 200: { description: 'The user is a platform admin', content: { 'application/json': { schema: PlatformAdminResultSchema } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const principal = c.get('principal');
  if (principal.kind === 'session') assertRecentSignIn(principal.signedInAt, 'make a user a platform admin');
  return c.json(await setPlatformAdmin(c.get('db'), { id: c.req.valid('param').id }, true, grantedBy(c)), 200);
};
