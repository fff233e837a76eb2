// The node credential look-up: one round trip by the token's public prefix,
// then the stored hash compared in constant time (as for keys). Runs on every
// relay call, and reads `revoked` each time, so a revocation holds from the
// node's next call on.
import { eq, sql } from 'drizzle-orm';
import { relayNodes } from '@edgemail/schema';
import { constantTimeEqual } from '@edgemail/shared';
import type { Db } from '../../db/client.js';
import { prepared } from '../../db/prepared.js';

export interface RelayNodeRow { id: string; projectId: string; name: string; revoked: boolean; installationWide: boolean }

const nodeByPrefix = prepared((db) => db
  .select({ id: relayNodes.id, projectId: relayNodes.projectId, name: relayNodes.name, revoked: relayNodes.revoked, installationWide: relayNodes.installationWide, keyHash: relayNodes.keyHash })
  .from(relayNodes)
  .where(eq(relayNodes.keyPrefix, sql.placeholder('keyPrefix')))
  .prepare('relay_node_by_prefix'));

/** @param tokenHash hex(sha256) of the whole presented token */
export async function findRelayNode(db: Db, keyPrefix: string, tokenHash: string): Promise<RelayNodeRow | null> {
  const [row] = await nodeByPrefix(db).execute({ keyPrefix });
  if (!row || !constantTimeEqual(row.keyHash, tokenHash)) return null;
  return { id: row.id, projectId: row.projectId, name: row.name, revoked: row.revoked, installationWide: row.installationWide };
}
