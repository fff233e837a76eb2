// A relay node's dead letters as the edge knows them (`GET
// /api/v1/admin/relay-nodes/{id}/dead-letters`). The messages themselves stay
// on the node's disk (`<spool>/dead/`, each with its `<id>.reason.txt`): they
// are what the edge refused, and the node never sends them again. The edge
// holds what every heartbeat reports, their number and bytes, and says where
// to read them.
import { eq } from 'drizzle-orm';
import { projects, relayNodes } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { iso } from '../../contracts/common.js';
import { notFound } from '../errors.js';

export async function relayNodeDeadLetters(db: Db, nodeId: string) {
  const [row] = await db.select({
    id: relayNodes.id, name: relayNodes.name, projectId: relayNodes.projectId, projectName: projects.name,
    deadLetters: relayNodes.deadLetters, deadLetterBytes: relayNodes.deadLetterBytes, lastHeartbeatAt: relayNodes.lastHeartbeatAt,
  }).from(relayNodes).innerJoin(projects, eq(projects.id, relayNodes.projectId)).where(eq(relayNodes.id, nodeId));
  if (!row) throw notFound('relay node not found');
  return {
    relay_node_id: row.id, relay_node_name: row.name, project_id: row.projectId, project_name: row.projectName,
    count: row.deadLetters, bytes: row.deadLetterBytes, reported_at: iso(row.lastHeartbeatAt),
  };
}
