// An identity provider as the API shows it: never the sealed secret, and the
// redirect URI derived from the current `server.public_url`.
import { identityProviders } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { IdentityProviderRecord } from '../../contracts/identity-provider.js';
import { redirectUriOf } from './redirect-uri.js';

type Row = typeof identityProviders.$inferSelect;

export function presentIdentityProvider(config: Config, row: Row): IdentityProviderRecord {
  // owner is refused on every write; a row holding it (edited by hand) shows as written.
  return {
    id: row.id,
    name: row.name,
    issuer: row.issuer,
    client_id: row.clientId,
    allowed_domains: row.allowedDomains,
    default_project_id: row.defaultProjectId,
    default_role: row.defaultRole as IdentityProviderRecord['default_role'],
    enabled: row.enabled,
    redirect_uri: redirectUriOf(config),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
