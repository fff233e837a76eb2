// The platform admin's OpenID Connect identity providers (docs/sso.md
// "Identity providers"). The client secret is write-only; `redirect_uri` is
// derived from `server.public_url`. The issuer's policy and discovery are
// checked by the service (they need the network), not here.
import { z } from '@hono/zod-openapi';
import { normalizeDomainName } from './domain-name.js';
import { Timestamp, Uuid } from './common.js';

export const MAX_ALLOWED_DOMAINS = 100;
export const PROVIDER_ROLES = ['member', 'admin'] as const;

/** `required` for a missing field, else `problem` (zod's own text names JavaScript types). */
const requiredOr = (problem: string) => ({ error: (issue: { input?: unknown }) => (issue.input === undefined ? 'required' : problem) });

const text = (max: number) => z.string(requiredOr('must be a string'))
  .min(1, 'must not be empty')
  .max(max, `must be at most ${max} characters`)
  // eslint-disable-next-line no-control-regex
  .refine((s) => !/[\x00-\x1f\x7f]/.test(s), 'must not contain control characters');

const name = text(100).transform((s) => s.trim()).refine((s) => s.length > 0, 'must not be empty')
  .openapi({ type: 'string', example: 'Acme SSO', description: 'A label of yours, 1 to 100 characters, unique (409 when taken); the sign-in page shows it' });

const issuer = z.string(requiredOr('must be a string')).min(1, 'must not be empty').max(2000, 'must be at most 2000 characters')
  .openapi({ example: 'https://login.acme.example', description: 'The provider\'s issuer URL, kept exactly as written (compared byte for byte with the `iss` of discovery and of every ID token). https; http only on loopback; no user name, password, query or fragment. Its discovery document (`<issuer>/.well-known/openid-configuration`) must answer with the same `issuer`: checked at create and whenever it changes.' });

const clientId = text(255).openapi({ type: 'string', example: 'edgemail', description: 'The client id the provider gave this service, 1 to 255 characters' });

const clientSecret = z.string(requiredOr('must be a string')).min(1, 'must not be empty').max(1000, 'must be at most 1000 characters')
  .openapi({ example: 's3cr3t', description: 'The client secret, 1 to 1000 characters. Write-only: stored sealed, never returned or logged.' });

const allowedDomains = z.array(
  z.string(requiredOr('must be a string')).max(300, 'must be at most 300 characters').transform((input, ctx) => {
    const result = normalizeDomainName(input.trim());
    if ('problem' in result) {
      ctx.addIssue({ code: 'custom', message: result.problem });
      return z.NEVER;
    }
    return result.name;
  }),
  requiredOr('must be an array of domain names'),
).max(MAX_ALLOWED_DOMAINS, `must hold at most ${MAX_ALLOWED_DOMAINS} domains`)
  .transform((domains) => [...new Set(domains)])
  .openapi({
    type: 'array',
    items: { type: 'string' },
    example: ['acme.example'],
    description: `The email domains whose addresses may sign in through this provider, at most ${MAX_ALLOWED_DOMAINS}; stored lower case, without a trailing dot, each once. Exact match: \`acme.example\` admits \`bob@acme.example\`, not \`bob@eu.acme.example\` (list each subdomain). Empty: nobody may sign in through it.`,
  });

const defaultProjectId = Uuid.nullable()
  .openapi({ description: 'The project a user signing in for the first time joins (null: none; such a user has no project until invited). Must exist.' });

const defaultRole = z.string(requiredOr('must be member or admin')).superRefine((role, ctx) => {
  if (role === 'owner') ctx.addIssue({ code: 'custom', message: 'owner cannot be given by single sign-on: a stranger\'s first sign-in must not own a project; use member or admin, and make an owner by hand' });
  else if (!(PROVIDER_ROLES as readonly string[]).includes(role)) ctx.addIssue({ code: 'custom', message: 'must be member or admin' });
}).transform((role) => role as (typeof PROVIDER_ROLES)[number])
  .openapi({ type: 'string', enum: [...PROVIDER_ROLES], description: 'The role in `default_project_id` of a user the provider brings in (`member` when omitted). Never `owner`.' });

const enabled = z.boolean(requiredOr('must be true or false'))
  .openapi({ description: 'Whether the sign-in page offers it and sign-ins through it are accepted (true when omitted)' });

export const CreateIdentityProviderSchema = z.object({
  name,
  issuer,
  client_id: clientId,
  client_secret: clientSecret,
  allowed_domains: allowedDomains.default([]),
  default_project_id: defaultProjectId.default(null),
  default_role: defaultRole.default('member'),
  enabled: enabled.default(true),
}).strict().openapi('CreateIdentityProvider');

export const UpdateIdentityProviderSchema = z.object({
  name: name.optional(),
  issuer: issuer.optional(),
  client_id: clientId.optional(),
  client_secret: clientSecret.optional(),
  allowed_domains: allowedDomains.optional(),
  default_project_id: defaultProjectId.optional(),
  default_role: defaultRole.optional(),
  enabled: enabled.optional(),
}).strict().refine((input) => Object.values(input).some((v) => v !== undefined), 'give at least one field to change')
  .openapi('UpdateIdentityProvider', { description: 'Any subset of the writable fields; the others stay. A new `client_secret` replaces the old one.' });

export const IdentityProviderSchema = z.object({
  id: z.uuid(),
  name: z.string().openapi({ example: 'Acme SSO' }),
  issuer: z.string().openapi({ example: 'https://login.acme.example' }),
  client_id: z.string().openapi({ example: 'edgemail' }),
  allowed_domains: z.array(z.string()).openapi({ example: ['acme.example'] }),
  default_project_id: z.uuid().nullable(),
  default_role: z.enum(PROVIDER_ROLES),
  enabled: z.boolean(),
  redirect_uri: z.string().openapi({ example: 'https://mail.example.com/app/api/session/oidc/callback', description: 'Register this at the provider: `server.public_url` + `/app/api/session/oidc/callback`, the same for every provider' }),
  created_at: Timestamp,
  updated_at: Timestamp,
}).openapi('IdentityProvider', { description: 'The client secret is never shown.' });

export type CreateIdentityProviderInput = z.infer<typeof CreateIdentityProviderSchema>;
export type UpdateIdentityProviderInput = z.infer<typeof UpdateIdentityProviderSchema>;
export type IdentityProviderRecord = z.infer<typeof IdentityProviderSchema>;
