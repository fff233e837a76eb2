import { desc, eq } from 'drizzle-orm';
import { relayNodes } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { presentRelayNode, relayNodeColumns } from './present.js';

/** The nodes the project enrolled, newest first, revoked ones included. */
export async function listRelayNodes(db: Db, projectId: string) {
  const rows = await db.select(relayNodeColumns).from(relayNodes)
    .where(eq(relayNodes.projectId, projectId))
    .orderBy(desc(relayNodes.createdAt), desc(relayNodes.id));
  return rows.map(presentRelayNode);
}
