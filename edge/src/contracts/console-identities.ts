// Bodies of the console's linked-identity routes (`/app/api/account/identities`,
// docs/sso.md "Linking a provider to your account").
import { z } from '@hono/zod-openapi';
import { Timestamp, Uuid } from './common.js';
import { ReturnToSchema } from './console-oidc.js';

export const LinkIdentitySchema = z.object({
  provider_id: Uuid.openapi({ description: 'An enabled identity provider (`GET /app/api/session/oidc/providers`).' }),
  return_to: ReturnToSchema.optional().openapi({ description: 'Where the browser lands once linked: a path on this site (default `/`)' }),
}).strict().openapi('LinkIdentity');

export const LinkStartedSchema = z.object({
  authorization_url: z.string().url().openapi({ description: 'The provider\'s authorization URL: navigate the browser to it (`location.href`).' }),
}).openapi('LinkStarted');

export const LinkedIdentitySchema = z.object({
  id: Uuid,
  provider_id: Uuid,
  provider_name: z.string(),
  subject: z.string().openapi({ description: 'The identity\'s `sub` at the provider.' }),
  created_at: Timestamp.openapi({ description: 'When it was linked.' }),
}).openapi('LinkedIdentity');

export const LinkedIdentityListSchema = z.object({ identities: z.array(LinkedIdentitySchema) }).openapi('LinkedIdentityList');
