// Every relay node of the installation, for the platform admin (`GET
// /api/v1/admin/relay-nodes`): each with its project's name and scope, and
// what its last heartbeat reported; newest first, a page at a time.
import { desc, eq, sql } from 'drizzle-orm';
import { projects, relayNodes } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { presentRelayNode, relayNodeColumns } from './present.js';

export async function listAllRelayNodes(db: Db, filter: { projectId?: string }, page: { limit: number; offset: number }) {
  const inProject = filter.projectId ? eq(relayNodes.projectId, filter.projectId) : undefined;
  const [rows, [count]] = await Promise.all([
    db.select({ ...relayNodeColumns, projectName: projects.name, installationWide: relayNodes.installationWide })
      .from(relayNodes).innerJoin(projects, eq(projects.id, relayNodes.projectId))
      .where(inProject)
      .orderBy(desc(relayNodes.createdAt), desc(relayNodes.id))
      .limit(page.limit).offset(page.offset),
    db.select({ n: sql<number>`count(*)::int` }).from(relayNodes).where(inProject),
  ]);
  return {
    relay_nodes: rows.map((r) => ({ ...presentRelayNode(r), project_name: r.projectName, installation_wide: r.installationWide })),
    total: count?.n ?? 0,
  };
}
