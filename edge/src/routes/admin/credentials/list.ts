import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CredentialSchema } from '../../../contracts/admin.js';
import { listPlatformCredentials } from '../../../services/platform-credentials/list.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/api/v1/admin/credentials',
  permission: 'platform:admin',
  summary: 'List platform credentials',
  tags: ['Admin'],
  responses: { 200: { description: 'Newest first, prefixes only', content: { 'application/json': { schema: z.object({ credentials: z.array(CredentialSchema) }) } } } },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json({ credentials: await listPlatformCredentials(c.get('db')) }, 200);
