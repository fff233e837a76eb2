import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CreateCredentialSchema, CredentialSchema } from '../../../contracts/admin.js';
import { createPlatformCredential } from '../../../services/platform-credentials/create.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/credentials',
  permission: 'platform:admin',
  summary: 'Mint a platform credential',
  description: 'The `mya_` token is returned in this response only.',
  tags: ['Admin'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateCredentialSchema } } } },
  responses: {
    201: { description: 'Credential minted', content: { 'application/json': { schema: z.object({ credential: CredentialSchema, token: z.string() }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) =>
  c.json(await createPlatformCredential(c.get('db'), c.req.valid('json')), 201);
