import { asc, eq } from 'drizzle-orm';
import { identityProviders } from '@edgemail/schema';
import type { Config } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { presentIdentityProvider } from './present.js';

export const providerNotFound = () => notFound('identity provider not found');

export async function listIdentityProviders(db: Db, config: Config) {
  const rows = await db.select().from(identityProviders).orderBy(asc(identityProviders.name));
  return rows.map((row) => presentIdentityProvider(config, row));
}

export async function findIdentityProvider(db: Db, config: Config, id: string) {
  const [row] = await db.select().from(identityProviders).where(eq(identityProviders.id, id));
  if (!row) throw providerNotFound();
  return presentIdentityProvider(config, row);
}
