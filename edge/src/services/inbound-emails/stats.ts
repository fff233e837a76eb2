import { eq, sql } from 'drizzle-orm';
import { inboundEmails } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { INBOUND_STATUSES, type InboundStatus } from '../../contracts/inbound-email.js';

/** How many of the project's inbound records are in each status; every status present, zeros included. */
export async function inboundStats(db: Db, projectId: string): Promise<Record<InboundStatus, number>> {
  const rows = await db.select({ status: inboundEmails.status, count: sql<number>`count(*)::int`.mapWith(Number) })
    .from(inboundEmails)
    .where(eq(inboundEmails.projectId, projectId))
    .groupBy(inboundEmails.status);
  const counts = Object.fromEntries(INBOUND_STATUSES.map((s) => [s, 0])) as Record<InboundStatus, number>;
  for (const row of rows) counts[row.status] = row.count;
  return counts;
}
