// A user's own passkeys: list, rename, delete. Another user's passkey is
// answered as if it did not exist (404), never as forbidden.
import { and, asc, eq } from 'drizzle-orm';
import { passkeys } from '@edgemail/schema';
import type { Db } from '../../../db/client.js';
import { notFound } from '../../errors.js';

type PasskeyRow = typeof passkeys.$inferSelect;

/** What a passkey is shown as: never its public key or credential id. */
export interface Passkey { id: string; name: string; created_at: string; last_used_at: string | null; backed_up: boolean }

export const presentPasskey = (row: PasskeyRow): Passkey => ({
  id: row.id, name: row.name, created_at: row.createdAt.toISOString(),
  last_used_at: row.lastUsedAt?.toISOString() ?? null, backed_up: row.backedUp,
});

const NOT_FOUND = 'passkey not found';

export async function listPasskeys(db: Db, userId: string): Promise<Passkey[]> {
  const rows = await db.select().from(passkeys).where(eq(passkeys.userId, userId)).orderBy(asc(passkeys.createdAt), asc(passkeys.id));
  return rows.map(presentPasskey);
}

export async function renamePasskey(db: Db, userId: string, id: string, name: string): Promise<Passkey> {
  const [row] = await db.update(passkeys).set({ name }).where(and(eq(passkeys.id, id), eq(passkeys.userId, userId))).returning();
  if (!row) throw notFound(NOT_FOUND);
  return presentPasskey(row);
}

export async function deletePasskey(db: Db, userId: string, id: string): Promise<void> {
  const [row] = await db.delete(passkeys).where(and(eq(passkeys.id, id), eq(passkeys.userId, userId))).returning({ id: passkeys.id });
  if (!row) throw notFound(NOT_FOUND);
}
