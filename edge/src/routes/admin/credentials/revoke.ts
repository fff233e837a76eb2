import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CredentialSchema } from '../../../contracts/admin.js';
import { IdParams } from '../../../contracts/common.js';
import { revokePlatformCredential } from '../../../services/platform-credentials/revoke.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/credentials/{id}/revoke',
  permission: 'platform:admin',
  summary: 'Revoke a platform credential',
  description: 'Effective on the next request made with it.',
  tags: ['Admin'],
  request: { params: IdParams },
  errors: [404],
  responses: { 200: { description: 'The revoked credential', content: { 'application/json': { schema: z.object({ credential: CredentialSchema }) } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ credential: await revokePlatformCredential(c.get('db'), c.req.valid('param').id) }, 200);
