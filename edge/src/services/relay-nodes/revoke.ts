import { and, eq, sql } from 'drizzle-orm';
import { relayNodes } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';
import { presentRelayNode, relayNodeColumns } from './present.js';

/**
 * Revokes a node's credential: its next call to `/relay/v1` is 401 `relay node
 * revoked`. Revoking twice keeps the first revocation time.
 */
export async function revokeRelayNode(db: Db, projectId: string, id: string) {
  const [row] = await db.update(relayNodes)
    .set({ revoked: true, revokedAt: sql`coalesce(${relayNodes.revokedAt}, now())` })
    .where(and(eq(relayNodes.projectId, projectId), eq(relayNodes.id, id)))
    .returning(relayNodeColumns);
  if (!row) throw notFound('relay node not found');
  return presentRelayNode(row);
}
