import { asc, eq } from 'drizzle-orm';
import { inboundRules } from '@edgemail/schema';
import type { Db } from '../../db/client.js';
import { presentInboundRule } from './present.js';

/** Every rule of the project, in the order they are tried. */
export async function listInboundRules(db: Db, projectId: string) {
  const rows = await db.select().from(inboundRules).where(eq(inboundRules.projectId, projectId)).orderBy(asc(inboundRules.position));
  return { inbound_rules: rows.map(presentInboundRule) };
}
