import { and, eq } from 'drizzle-orm';
import { inboundRules } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { notFound } from '../errors.js';

export const ruleNotFound = () => notFound('inbound rule not found');

/** The project's rule, or 404 (another project's id answers the same). */
export async function findInboundRule(db: Db, projectId: string, id: string) {
  const [row] = await db.select().from(inboundRules).where(and(eq(inboundRules.projectId, projectId), eq(inboundRules.id, id)));
  if (!row) throw ruleNotFound();
  return row;
}
