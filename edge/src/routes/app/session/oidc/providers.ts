import type { RouteHandler } from '@hono/zod-openapi';
import { asc, eq } from 'drizzle-orm';
import { identityProviders } from '@edgemail/schema';
import { defineRoute } from '../../../../http/define-route.js';
import { SignInProvidersSchema } from '../../../../contracts/console-oidc.js';
import type { AppEnv } from '../../../../env.js';

export const route = defineRoute({
  method: 'get',
  path: '/app/api/session/oidc/providers',
  permission: 'public',
  auditType: null,
  summary: 'List the single sign-on providers',
  description: 'The enabled identity providers a sign-in page offers as buttons: id and name only (docs/sso.md). No credential needed.',
  tags: ['Console session'],
  responses: {
    200: { description: 'Enabled providers, by name', content: { 'application/json': { schema: SignInProvidersSchema } } },
  },
});

export const handler: RouteHandler<typeof route, AppEnv> = async (c) => {
  const rows = await c.get('db').select({ id: identityProviders.id, name: identityProviders.name }).from(identityProviders)
    .where(eq(identityProviders.enabled, true)).orderBy(asc(identityProviders.name));
  return c.json({ identity_providers: rows }, 200);
};
