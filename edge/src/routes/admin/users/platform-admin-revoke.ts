import { type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { PlatformAdminResultSchema } from '../../../contracts/admin.js';
import { IdParams } from '../../../contracts/common.js';
import { setPlatformAdmin } from '../../../services/users/set-platform-admin.js';
import { grantedBy } from './granted-by.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'delete',
  path: '/api/v1/admin/users/{id}/platform-admin',
  permission: 'platform:admin',
  auditType: 'user.platform_admin_revoked',
  summary: 'Stop a user being a platform admin',
  description: [
    'Clears `platform_admin`: the user\'s sessions are refused on `/api/v1/admin` from the very next request (403 `admin privileges required`); they stay signed in to the console.',
    'Idempotent (`changed: false` when the user was not one). A platform admin may revoke their own. An unknown user is 404. Taking power away needs no recent sign-in.',
    'Written to the admin trail as `user.platform_admin_revoked` and, when it changed, to the user\'s own security trail as `auth.platform_admin.revoked`.',
  ].join(' '),
  request: { params: IdParams },
  errors: [404],
  responses: { 200: { description: 'The user is not a platform admin', content: { 'application/json': { schema: PlatformAdminResultSchema } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json(await setPlatformAdmin(c.get('db'), { id: c.req.valid('param').id }, false, grantedBy(c)), 200);
