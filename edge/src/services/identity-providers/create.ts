import { identityProviders } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { isForeignKeyViolation, isUniqueViolation } from '../../db/errors.js';
import type { CreateIdentityProviderInput } from '../../contracts/identity-provider.js';
import { conflict } from '../errors.js';
import { checkDefaultProject, checkIssuer, noDefaultProject } from './check.js';
import { sealClientSecret } from './client-secret.js';
import { presentIdentityProvider } from './present.js';

export const nameTaken = (name: string) => conflict(`an identity provider named "${name}" already exists`);

/** Stores a provider after its checks (check.ts); the client secret sealed. */
export async function createIdentityProvider(db: Db, config: Config, input: CreateIdentityProviderInput) {
  await checkDefaultProject(db, input.default_project_id);
  await checkIssuer(input.issuer);
  try {
    const [row] = await db.insert(identityProviders).values({
      name: input.name,
      issuer: input.issuer,
      clientId: input.client_id,
      clientSecretSealed: await sealClientSecret(config, input.client_secret),
      allowedDomains: input.allowed_domains,
      defaultProjectId: input.default_project_id,
      defaultRole: input.default_role,
      enabled: input.enabled,
    }).returning();
    return presentIdentityProvider(config, row!);
  } catch (e) {
    if (isUniqueViolation(e)) throw nameTaken(input.name);
    if (isForeignKeyViolation(e) && input.default_project_id !== null) throw noDefaultProject(input.default_project_id);
    throw e;
  }
}
