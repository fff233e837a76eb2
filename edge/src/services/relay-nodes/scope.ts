// Which domains a node serves: its own project's (the default for a node a
// project key enrolled), or every project's. Only the operator widens a node,
// with database access (`edgemail relay scope`): no API key can.
import { eq } from 'drizzle-orm';
import { relayNodes } from '@edgemail/schema';
import type { AnyDb } from '../../db/any-db.js';

/** Returns whether the node exists. */
export async function setNodeScope(db: AnyDb, nodeId: string, installationWide: boolean): Promise<boolean> {
  const rows = await db.update(relayNodes).set({ installationWide }).where(eq(relayNodes.id, nodeId)).returning({ id: relayNodes.id });
  return rows.length > 0;
}
