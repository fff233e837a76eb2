// Deleting a provider removes its user identities and ends the sessions
// opened through it (both foreign keys cascade); the users and their
// memberships stay (docs/sso.md).
import { eq } from 'drizzle-orm';
import { identityProviders } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { providerNotFound } from './find.js';

export async function deleteIdentityProvider(db: Db, id: string): Promise<void> {
  const deleted = await db.delete(identityProviders).where(eq(identityProviders.id, id)).returning({ id: identityProviders.id });
  if (deleted.length === 0) throw providerNotFound();
}
