import { eq, sql } from 'drizzle-orm';
import { identityProviders, sessions } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.js';
import type { UpdateIdentityProviderInput } from '../../contracts/identity-provider.js';
import { checkDefaultProject, checkIssuer, noDefaultProject } from './check.js';
import { sealClientSecret } from './client-secret.js';
import { nameTaken } from './create.js';
import { providerNotFound } from './find.js';
import { presentIdentityProvider } from './present.js';

/** Changes the fields given; the issuer is checked again (discovery) only when it changes. */
export async function updateIdentityProvider(db: Db, config: Config, id: string, input: UpdateIdentityProviderInput) {
  const [current] = await db.select({ issuer: identityProviders.issuer }).from(identityProviders).where(eq(identityProviders.id, id));
  if (!current) throw providerNotFound();
  if (input.default_project_id !== undefined) await checkDefaultProject(db, input.default_project_id);
  if (input.issuer !== undefined && input.issuer !== current.issuer) await checkIssuer(input.issuer);
  const changes: Partial<typeof identityProviders.$inferInsert> = {
    name: input.name,
    issuer: input.issuer,
    clientId: input.client_id,
    clientSecretSealed: input.client_secret === undefined ? undefined : await sealClientSecret(config, input.client_secret),
    allowedDomains: input.allowed_domains,
    defaultProjectId: input.default_project_id,
    defaultRole: input.default_role,
    enabled: input.enabled,
  };
  try {
    const [row] = await db.update(identityProviders)
      .set({ ...changes, updatedAt: sql`now()` })
      .where(eq(identityProviders.id, id))
      .returning();
    if (!row) throw providerNotFound(); // deleted meanwhile
    // Disabling ends the sessions opened through it for good (re-enabling must not revive
    // them); the session look-up refuses them from the update on, before this delete too.
    if (input.enabled === false) await db.delete(sessions).where(eq(sessions.identityProviderId, id));
    return presentIdentityProvider(config, row);
  } catch (e) {
    if (isUniqueViolation(e)) throw nameTaken(input.name!);
    if (isForeignKeyViolation(e) && input.default_project_id) throw noDefaultProject(input.default_project_id);
    throw e;
  }
}
