import { z } from '@hono/zod-openapi';

export const SignInProvidersSchema = z.object({
  identity_providers: z.array(z.object({
    id: z.string().uuid(),
    name: z.string().openapi({ example: 'Acme Okta' }),
  })),
}).openapi('SignInProviders');

// A path on this site only: one leading slash, never `//host` or `/\host` (an open redirect).
export const ReturnToSchema = z.string().max(2000)
  .regex(/^\/(?![/\\])[^\s\\]*$/, 'return_to must be a path on this site, starting with a single /')
  .openapi({ description: 'Where the browser lands after signing in: a path on this site (default `/`)', example: '/projects' });

export const OidcStartParams = z.object({ provider_id: z.string().uuid() });
export const OidcStartQuery = z.object({ return_to: ReturnToSchema.optional() });

// The provider's redirect: a code and the state, or an error and the state.
export const OidcCallbackQuery = z.object({
  code: z.string().max(4096).optional(),
  state: z.string().max(512).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
  iss: z.string().max(2048).optional(),
}).passthrough();

export const OidcRefusalSchema = z.object({ error: z.string() }).openapi('OidcSignInRefused');
