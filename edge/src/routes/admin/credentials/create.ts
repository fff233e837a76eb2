import { z, type RouteHandler } from '@hono/zod-openapi';
import { defineRoute } from '../../../http/define-route.js';
import { CreateCredentialSchema, CredentialSchema } from '../../../contracts/admin.js';
import { createPlatformCredential } from '../../../services/platform-credentials/create.js';
import { assertRecentSignIn } from '../../../services/console/recent-sign-in.js';
import type { AppEnv } from '../../../env.js';

export const route = defineRoute({
  method: 'post',
  path: '/api/v1/admin/credentials',
  permission: 'platform:admin',
  summary: 'Mint a platform credential',
  description: 'The `mya_` token is returned in this response only. A platform admin\'s console session must have signed in within the last 15 minutes (403 `sign in again to …`, nothing minted): a credential is a lasting way in.',
  tags: ['Admin'],
  request: { body: { required: true, content: { 'application/json': { schema: CreateCredentialSchema } } } },
  responses: {
    201: { description: 'Credential minted', content: { 'application/json': { schema: z.object({ credential: CredentialSchema, token: z.string() }) } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const principal = c.get('principal');
  if (principal.kind === 'session') assertRecentSignIn(principal.signedInAt, 'mint a platform credential');
  return c.json(await createPlatformCredential(c.get('db'), c.req.valid('json')), 201);
};
