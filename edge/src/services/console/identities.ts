// A user's own links to identity-provider identities (`user_identities`):
// list and unlink. Another user's link is answered as if it did not exist
// (404). Unlinking the last way in is refused: an account with no password, no
// passkey and no other identity could not be signed in to again.
import { and, asc, eq, sql } from 'drizzle-orm';
import { identityProviders, userIdentities } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { conflict, notFound } from '../errors.js';

export interface LinkedIdentity { id: string; provider_id: string; provider_name: string; subject: string; created_at: string }

export async function listIdentities(db: Db, userId: string): Promise<LinkedIdentity[]> {
  const rows = await db.select({
    id: userIdentities.id, providerId: userIdentities.providerId, providerName: identityProviders.name,
    subject: userIdentities.subject, createdAt: userIdentities.createdAt,
  }).from(userIdentities).innerJoin(identityProviders, eq(identityProviders.id, userIdentities.providerId))
    .where(eq(userIdentities.userId, userId)).orderBy(asc(userIdentities.createdAt), asc(userIdentities.id));
  return rows.map((r) => ({ id: r.id, provider_id: r.providerId, provider_name: r.providerName, subject: r.subject, created_at: r.createdAt.toISOString() }));
}

export const LAST_WAY_IN = 'this is the last way to sign in to this account: set a password or add a passkey before unlinking it';

/** Unlinks one identity in one statement that also checks another way in remains (password, passkey or another identity). */
export async function unlinkIdentity(db: Db, userId: string, id: string): Promise<void> {
  const { rows } = await db.execute<{ id: string }>(sql`
    delete from user_identities i
    where i.id = ${id} and i.user_id = ${userId}
      and exists (
        select 1 from users u where u.id = i.user_id and (
          u.password_hash is not null
          or exists (select 1 from passkeys pk where pk.user_id = u.id)
          or exists (select 1 from user_identities o where o.user_id = u.id and o.id <> i.id)))
    returning i.id`);
  if (rows.length) return;
  const [own] = await db.select({ id: userIdentities.id }).from(userIdentities)
    .where(and(eq(userIdentities.id, id), eq(userIdentities.userId, userId)));
  throw own ? conflict(LAST_WAY_IN) : notFound('linked identity not found');
}
